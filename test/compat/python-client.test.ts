import { execFile } from 'node:child_process';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CoreV1Api } from '@kubernetes/client-node';
import { allowAll } from '../../gateway/src/auth/authorizer.ts';
import { startGateway, type Gateway } from '../../gateway/src/gateway.ts';
import { apiHandlers } from '../../gateway/src/services/api.ts';
import { ResourceStore } from '../../gateway/src/store/store.ts';
import { useCluster } from '../helpers/use-cluster.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const CRDS = resolve(HERE, '..', '..', 'crds');
const CACHE = process.env['AIEM_CACHE'] ?? join(homedir(), '.cache', 'ai-engine-manager');
// `make python-clients` installs these; the Makefile is where the pinned versions live.
const VERSIONS = (process.env['PYTHON_CLIENT_VERSIONS'] ?? '1.4.0 1.10.2').split(/\s+/).filter(Boolean);
const cluster = useCluster();
let gateway: Gateway;

beforeAll(async () => {
  await cluster().kubectl(['apply', '-f', CRDS]);
  await cluster().kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
  const namespaces = cluster().kubeConfig.makeApiClient(CoreV1Api);
  await namespaces.createNamespace({ body: { metadata: { name: 'compat' } } });
  const store = new ResourceStore(cluster().kubeConfig, 'compat');
  gateway = await startGateway({
    host: '127.0.0.1',
    restPort: 0,
    grpcPort: 0,
    handlers: apiHandlers({ store, authorizer: allowAll }),
    version: 'test',
  });
});

afterAll(async () => {
  await gateway.stop();
});

describe.each(VERSIONS)('the h2o-engine-manager %s Python client, unmodified', (version) => {
  test.each([
    [
      'creates, gets, lists, updates and deletes notebook engine images',
      'notebook_engine_images.py',
      'images',
    ],
    [
      'manages profiles of each kind, and DAI and H2O versions with their aliases',
      'profiles_and_versions.py',
      'admin',
    ],
    ['creates and manages DAI, H2O and notebook engines', 'engines.py', 'engines'],
  ])('%s', async (_what, script, workspace) => {
    const python = join(CACHE, `python-client-${version}`, 'bin', 'python');
    const { stdout } = await promisify(execFile)(python, [
      join(HERE, script),
      gateway.restUrl,
      `${workspace}-${version.replaceAll('.', '-')}`,
    ]).catch((error: unknown) => {
      const out =
        typeof error === 'object' && error !== null && 'stdout' in error ? String(error.stdout) : '';
      const err =
        typeof error === 'object' && error !== null && 'stderr' in error
          ? String(error.stderr)
          : String(error);
      throw new Error(`The client script failed:\n${out}\n${err}`);
    });
    expect(stdout).not.toContain('FAIL');
    expect(stdout.trim().split('\n').at(-1)).toBe('all steps passed');
  });
});
