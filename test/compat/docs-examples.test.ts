/**
 * Every Python example of the documentation site (docs-site/examples/*.py) runs, unmodified,
 * with the published h2o-engine-manager client against the product (gateway and operator) on a
 * real control plane with simulated nodes, where engines really start, pause and stop, and
 * prints exactly the output the site shows beside it (the example's .out file). The curl
 * examples (docs-site/examples/rest/*.sh) run the same way with bash, curl and jq, after the
 * documented token.sh that turns the refresh token into an access token.
 *
 * The examples log in as users do, with `login_custom` (an OIDC refresh-token exchange) at the
 * embedded identity provider, whose tokens the gateway verifies; the built-in default policy
 * decides what each may do. Two people run them: an administrator and a data scientist. Each
 * example runs on a product of its own (its own namespace, so its own workspaces/global), after
 * the examples it builds on; a few run at once.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CoreV1Api } from '@kubernetes/client-node';
import { pino } from 'pino';
import { startGateway, type Gateway } from '../../gateway/src/gateway.ts';
import { apiHandlers } from '../../gateway/src/services/api.ts';
import { ResourceStore } from '../../gateway/src/store/store.ts';
import { startOperator, type Operator } from '../../operator/src/operator.ts';
import { useCluster } from '../helpers/use-cluster.ts';
import { useIdentity } from '../helpers/use-identity.ts';
import { runAhead } from '../helpers/runs-ahead.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const CRDS = resolve(HERE, '..', '..', 'crds');
const EXAMPLES = resolve(HERE, '..', '..', 'docs-site', 'examples');
const CACHE = process.env['AIEM_CACHE'] ?? join(homedir(), '.cache', 'ai-engine-manager');
/** The release the site documents (docs-site/docs/py/installation); `make python-clients` installs it. */
const DOCUMENTED_CLIENT = '1.10.2';

/** Who runs an example, and which examples must have run before it (in the same namespace). */
interface Example {
  as: 'admin' | 'alice';
  after: string[];
}

const EXAMPLES_RUN: Record<string, Example> = {
  'login.py': { as: 'alice', after: ['admin_dai.py'] },
  'quickstart.py': { as: 'alice', after: ['admin_dai.py'] },
  'initialization.py': { as: 'alice', after: [] },
  'admin_dai.py': { as: 'admin', after: [] },
  'admin_h2o.py': { as: 'admin', after: [] },
  'admin_notebook.py': { as: 'admin', after: [] },
  'admin_manage.py': { as: 'admin', after: ['admin_dai.py', 'admin_notebook.py'] },
  'admin_apply_configs.py': { as: 'admin', after: [] },
  'dai_create.py': { as: 'alice', after: ['admin_dai.py'] },
  'dai_manage.py': { as: 'alice', after: ['admin_dai.py', 'dai_create.py'] },
  'dai_pause.py': { as: 'alice', after: ['admin_dai.py', 'dai_create.py'] },
  'migration.py': { as: 'admin', after: ['admin_dai.py'] },
  'h2o_create.py': { as: 'alice', after: ['admin_h2o.py'] },
  'h2o_manage.py': { as: 'alice', after: ['admin_h2o.py', 'h2o_create.py'] },
  'notebook_create.py': { as: 'alice', after: ['admin_notebook.py'] },
  'notebook_manage.py': { as: 'alice', after: ['admin_notebook.py', 'notebook_create.py'] },
  'admin_sandbox.py': { as: 'admin', after: [] },
  'sandbox_create.py': { as: 'alice', after: ['admin_sandbox.py'] },
  'sandbox_process.py': { as: 'alice', after: ['admin_sandbox.py', 'sandbox_create.py'] },
  'sandbox_files.py': { as: 'alice', after: ['admin_sandbox.py', 'sandbox_create.py'] },
  'rest/dai_create.sh': { as: 'alice', after: ['admin_dai.py'] },
  'rest/dai_pause.sh': { as: 'alice', after: ['admin_dai.py', 'rest/dai_create.sh'] },
  'rest/h2o_create.sh': { as: 'alice', after: ['admin_h2o.py'] },
  'rest/notebook_create.sh': { as: 'alice', after: ['admin_notebook.py'] },
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

// The people of the examples: an administrator, and a data scientist who may use GPU profiles.
const { identity, authenticate, authorizer } = useIdentity({
  accounts: [
    { id: 'admin', name: 'Platform Admin', roles: ['admin'] },
    { id: 'alice', name: 'Alice', roles: ['data-scientists', 'gpu-users'] },
  ],
});

// Room on the simulated nodes for the engines of the examples that run at once.
const cluster = useCluster({ nodes: { cpuNodes: 6, gpuNodes: 4, gpusPerNode: 4 } });
let namespaces = 0;

beforeAll(async () => {
  await cluster().kubectl(['apply', '-f', CRDS]);
  await cluster().kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
});

const PUBLIC_URL = 'https://ai.example.com';

/** The product on a fresh namespace: a gateway and an operator with nothing in them yet. */
async function freshProduct(): Promise<{
  namespace: string;
  gateway: Gateway;
  operator: Operator;
  store: ResourceStore;
}> {
  const namespace = `docs-examples-${++namespaces}`;
  await cluster()
    .kubeConfig.makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: namespace } } });
  const store = new ResourceStore(cluster().kubeConfig, namespace);
  await store.startCaches();
  const gateway = await startGateway({
    host: '127.0.0.1',
    restPort: 0,
    grpcPort: 0,
    handlers: apiHandlers({
      store,
      authorizer,
      publicUrl: PUBLIC_URL,
    }),
    authenticate,
    version: 'test',
  });
  const operator = await startOperator({
    kubeConfig: cluster().kubeConfig,
    namespace,
    settings: { publicUrl: PUBLIC_URL },
    log: pino({ level: process.env['AIEM_LOG_LEVEL'] ?? 'silent' }),
  });
  return { namespace, gateway, operator, store };
}

/** Runs one example as its user; resolves to its standard output. */
async function run(gateway: Gateway, file: string): Promise<string> {
  const example = EXAMPLES_RUN[file];
  if (example === undefined) throw new Error(`${file} is not listed in EXAMPLES_RUN`);
  const python = join(CACHE, `python-client-${DOCUMENTED_CLIENT}`, 'bin', 'python');
  const { provider } = identity();
  const env = {
    PATH: process.env['PATH'] ?? '',
    AIEM_URL: gateway.restUrl,
    AIEM_ISSUER_URL: provider.issuer,
    AIEM_CLIENT_ID: provider.clientId,
    AIEM_REFRESH_TOKEN: await provider.refreshToken(example.as),
  };
  // A curl example runs as a reader would paste it: after token.sh, stopping at the first failure.
  const command: [string, string[]] = file.endsWith('.sh')
    ? ['bash', ['--norc', '--noprofile', '-c', `set -euo pipefail; source rest/token.sh; source ${file}`]]
    : [python, [join(EXAMPLES, file)]];
  try {
    const { stdout } = await promisify(execFile)(...command, {
      env,
      cwd: EXAMPLES,
      // Within the test's own time limit, so that a stuck example does not outlive it.
      timeout: 240_000,
    });
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

const files = [
  ...readdirSync(EXAMPLES).filter((f) => f.endsWith('.py')),
  ...readdirSync(join(EXAMPLES, 'rest'))
    .filter((f) => f.endsWith('.sh') && f !== 'token.sh')
    .map((f) => `rest/${f}`),
].sort();

/** The documented output of an example: its name with `.out` for `.py` or `.sh`. */
const outputOf = (file: string): string => join(EXAMPLES, file.replace(/\.(py|sh)$/, '.out'));

test('every example is listed with its user and prerequisites, and has its documented output', () => {
  expect(Object.keys(EXAMPLES_RUN).sort()).toEqual(files);
  for (const file of files) expect(existsSync(outputOf(file))).toBe(true);
});

/**
 * Runs an example on a product of its own, after the examples it builds on; resolves to its
 * standard output.
 */
async function runOnFreshProduct(file: string): Promise<string> {
  const { namespace, gateway, operator, store } = await freshProduct();
  try {
    for (const before of EXAMPLES_RUN[file]?.after ?? []) await run(gateway, before);
    return await run(gateway, file);
  } finally {
    await cluster().kubectl([
      'delete',
      'daiengines,h2oengines,notebookengines,sandboxengines',
      '--all',
      '--namespace',
      namespace,
      '--wait=true',
      '--timeout=120s',
    ]);
    await operator.stop();
    await gateway.stop();
    await store.stopCaches();
  }
}

// The examples run a few at a time, each in its own namespace (they mostly wait on engines and
// on Python); each test checks its own.
const outcome = runAhead(files, runOnFreshProduct);

describe(`the documentation examples with h2o-engine-manager ${DOCUMENTED_CLIENT}`, () => {
  test.each(files)(
    '%s runs and prints its documented output',
    async (file) => {
      const stdout = await outcome(file);
      const out = outputOf(file);
      // UPDATE_EXAMPLE_OUTPUT=1 records the output after a deliberate change; review the diff.
      if (process.env['UPDATE_EXAMPLE_OUTPUT'] === '1') writeFileSync(out, stdout);
      expect(stdout).toBe(readFileSync(out, 'utf8'));
    },
    // Examples wait for engines to start, pause and go, checking every five seconds; the first
    // tests also wait for the runs started before theirs.
    600_000,
  );
});
