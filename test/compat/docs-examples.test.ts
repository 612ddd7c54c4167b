/**
 * Every Python example of the documentation site (docs-site/examples/*.py) runs, unmodified,
 * with the published h2o-engine-manager client against a gateway on a real control plane, and
 * prints exactly the output the site shows beside it (the example's .out file).
 *
 * The examples log in as users do, with `login_custom` (an OIDC refresh-token exchange): a small
 * identity provider in this file answers the exchange, and the gateway maps the access tokens it
 * issues to two callers, an administrator and a data scientist. Each example runs on a gateway of
 * its own (its own namespace, so its own workspaces/global), after the examples it builds on.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CoreV1Api } from '@kubernetes/client-node';
import type { Caller } from '../../gateway/src/auth/authorizer.ts';
import type { Authenticate } from '../../gateway/src/call/handler.ts';
import { ApiError } from '../../gateway/src/errors/api-error.ts';
import { Code } from '../../gateway/src/errors/code.ts';
import { startGateway, type Gateway } from '../../gateway/src/gateway.ts';
import { apiHandlers } from '../../gateway/src/services/api.ts';
import { ResourceStore } from '../../gateway/src/store/store.ts';
import { useCluster } from '../helpers/use-cluster.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const CRDS = resolve(HERE, '..', '..', 'crds');
const EXAMPLES = resolve(HERE, '..', '..', 'docs-site', 'examples');
const CACHE = process.env['AIEM_CACHE'] ?? join(homedir(), '.cache', 'ai-engine-manager');
/** The release the site documents (docs-site/docs/py/installation); `make python-clients` installs it. */
const DOCUMENTED_CLIENT = '1.10.2';
const CLIENT_ID = 'ai-engine-manager-docs';

/** Who runs an example, and which examples must have run before it (in the same namespace). */
interface Example {
  as: 'admin' | 'alice';
  after: string[];
}

const EXAMPLES_RUN: Record<string, Example> = {
  'login.py': { as: 'alice', after: ['admin_dai.py'] },
  'initialization.py': { as: 'alice', after: [] },
  'admin_dai.py': { as: 'admin', after: [] },
  'admin_h2o.py': { as: 'admin', after: [] },
  'admin_notebook.py': { as: 'admin', after: [] },
  'admin_manage.py': { as: 'admin', after: ['admin_dai.py', 'admin_notebook.py'] },
  'admin_apply_configs.py': { as: 'admin', after: [] },
  'dai_create.py': { as: 'alice', after: ['admin_dai.py'] },
  'dai_manage.py': { as: 'alice', after: ['admin_dai.py', 'dai_create.py'] },
  'migration.py': { as: 'admin', after: ['admin_dai.py'] },
  'h2o_create.py': { as: 'alice', after: ['admin_h2o.py'] },
  'h2o_manage.py': { as: 'alice', after: ['admin_h2o.py', 'h2o_create.py'] },
  'notebook_create.py': { as: 'alice', after: ['admin_notebook.py'] },
  'notebook_manage.py': { as: 'alice', after: ['admin_notebook.py', 'notebook_create.py'] },
  'engines_list.py': {
    as: 'alice',
    after: [
      'admin_dai.py',
      'admin_h2o.py',
      'admin_notebook.py',
      'dai_create.py',
      'h2o_create.py',
      'notebook_create.py',
      'admin_manage.py',
    ],
  },
};

/** The identities behind the access tokens the identity provider below issues. */
const CALLERS: Record<Example['as'], Caller> = {
  admin: { subject: 'users/admin', displayName: 'Platform Admin', roles: ['admin'] },
  alice: { subject: 'users/alice', displayName: 'Alice', roles: ['data-scientists', 'gpu-users'] },
};

/** Every caller may do everything. */
const permissive = {
  check: (): Promise<void> => Promise.resolve(),
  isAdministrator: (): Promise<boolean> => Promise.resolve(true),
};

const authenticate: Authenticate = (headers) => {
  const token = /^Bearer access-(\w+)$/.exec(headers['authorization'] ?? '')?.[1];
  const caller = token === undefined ? undefined : CALLERS[token as Example['as']];
  if (caller === undefined)
    return Promise.reject(new ApiError(Code.UNAUTHENTICATED, 'A valid access token is required'));
  return Promise.resolve(caller);
};

/**
 * An OIDC identity provider as far as a refresh-token exchange needs one: discovery, and a
 * token endpoint that trades `refresh-<who>` for `access-<who>`.
 */
async function startIdentityProvider(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const json = (status: number, body: object): void => {
      res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    };
    if (req.method === 'GET' && req.url === '/.well-known/openid-configuration') {
      json(200, { issuer: base, token_endpoint: `${base}/token` });
      return;
    }
    if (req.method !== 'POST' || req.url !== '/token') {
      json(404, { error: 'not_found' });
      return;
    }
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const form = new URLSearchParams(body);
      const who = /^refresh-(\w+)$/.exec(form.get('refresh_token') ?? '')?.[1];
      if (form.get('grant_type') !== 'refresh_token' || form.get('client_id') !== CLIENT_ID || !who) {
        json(400, { error: 'invalid_grant' });
        return;
      }
      json(200, { access_token: `access-${who}`, token_type: 'Bearer', expires_in: 300 });
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const cluster = useCluster();
let issuer: { url: string; server: Server };
let namespaces = 0;

beforeAll(async () => {
  await cluster().kubectl(['apply', '-f', CRDS]);
  await cluster().kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
  issuer = await startIdentityProvider();
});

afterAll(async () => {
  await new Promise((done) => issuer.server.close(done));
});

/** A gateway on a fresh namespace: an empty product. */
async function freshGateway(): Promise<Gateway> {
  const namespace = `docs-examples-${++namespaces}`;
  await cluster()
    .kubeConfig.makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: namespace } } });
  return startGateway({
    host: '127.0.0.1',
    restPort: 0,
    grpcPort: 0,
    handlers: apiHandlers({
      store: new ResourceStore(cluster().kubeConfig, namespace),
      authorizer: permissive,
      publicUrl: 'https://ai.example.com',
    }),
    authenticate,
    version: 'test',
  });
}

/** Runs one example as its user; resolves to its standard output. */
async function run(gateway: Gateway, file: string): Promise<string> {
  const example = EXAMPLES_RUN[file];
  if (example === undefined) throw new Error(`${file} is not listed in EXAMPLES_RUN`);
  const python = join(CACHE, `python-client-${DOCUMENTED_CLIENT}`, 'bin', 'python');
  const env = {
    PATH: process.env['PATH'] ?? '',
    AIEM_URL: gateway.restUrl,
    AIEM_ISSUER_URL: issuer.url,
    AIEM_CLIENT_ID: CLIENT_ID,
    AIEM_REFRESH_TOKEN: `refresh-${example.as}`,
  };
  try {
    const { stdout } = await promisify(execFile)(python, [join(EXAMPLES, file)], { env, cwd: EXAMPLES });
    return stdout;
  } catch (error: unknown) {
    const output = (key: string): string =>
      typeof error === 'object' && error !== null && key in error
        ? String((error as Record<string, unknown>)[key])
        : '';
    throw new Error(`${file} failed:\n${output('stdout')}\n${output('stderr') || String(error)}`, {
      cause: error,
    });
  }
}

const files = readdirSync(EXAMPLES)
  .filter((f) => f.endsWith('.py'))
  .sort();

test('every example is listed with its user and prerequisites, and has its documented output', () => {
  expect(Object.keys(EXAMPLES_RUN).sort()).toEqual(files);
  for (const file of files) expect(readdirSync(EXAMPLES)).toContain(`${basename(file, '.py')}.out`);
});

describe(`the documentation examples with h2o-engine-manager ${DOCUMENTED_CLIENT}`, () => {
  test.each(files)('%s runs and prints its documented output', async (file) => {
    const gateway = await freshGateway();
    try {
      for (const before of EXAMPLES_RUN[file]?.after ?? []) await run(gateway, before);
      const stdout = await run(gateway, file);
      const out = join(EXAMPLES, `${basename(file, '.py')}.out`);
      // UPDATE_EXAMPLE_OUTPUT=1 records the output after a deliberate change; review the diff.
      if (process.env['UPDATE_EXAMPLE_OUTPUT'] === '1') writeFileSync(out, stdout);
      expect(stdout).toBe(readFileSync(out, 'utf8'));
    } finally {
      await gateway.stop();
    }
  });
});
