import { execFile } from 'node:child_process';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CoreV1Api } from '@kubernetes/client-node';
import { useApiServer } from '../helpers/api-server.ts';
import { useIdentity } from '../helpers/use-identity.ts';
import { runAhead } from '../helpers/runs-ahead.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const CACHE = process.env['AIEM_CACHE'] ?? join(homedir(), '.cache', 'ai-engine-manager');
// `make python-clients` installs these; the Makefile is where the pinned versions live.
const VERSIONS = (process.env['PYTHON_CLIENT_VERSIONS'] ?? '1.4.0 1.10.2').split(/\s+/).filter(Boolean);
// Real tokens and the default policy: an administrator sets things up, a user runs engines.
const { identity, authenticate, authorizer } = useIdentity({
  accounts: [
    { id: 'admin', name: 'Ada Admin', roles: ['admin'] },
    { id: 'user', name: 'Una User', roles: ['data-scientist'] },
    { id: 'other', name: 'Otto Other', roles: ['data-scientist'] },
  ],
});
// The operator runs too, so that the client's wait() sees engines really start and stop.
// metrics-server too, for the sandbox metrics; public ports go under a made-up base URL.
const api = useApiServer({
  namespace: 'compat',
  authenticate,
  authorizer,
  operator: true,
  cluster: { metrics: true },
  publicPorts: { url: 'https://ports.compat.example' },
});

/** The identity provider and each account's refresh token: every run logs in anew, as `login_custom` does. */
async function clientEnv(): Promise<NodeJS.ProcessEnv> {
  const { provider } = identity();
  return {
    ...process.env,
    AIEM_ISSUER_URL: provider.issuer,
    AIEM_CLIENT_ID: provider.clientId,
    AIEM_ADMIN_REFRESH_TOKEN: await provider.refreshToken('admin'),
    AIEM_USER_REFRESH_TOKEN: await provider.refreshToken('user'),
    AIEM_OTHER_REFRESH_TOKEN: await provider.refreshToken('other'),
  };
}

/** What each client script checks, the script, and the workspace it works in. */
const SCRIPTS: readonly (readonly [string, string, string])[] = [
  ['creates, gets, lists, updates and deletes notebook engine images', 'notebook_engine_images.py', 'images'],
  [
    'manages profiles of each kind, and DAI and H2O versions with their aliases',
    'profiles_and_versions.py',
    'admin',
  ],
  ['creates and manages DAI, H2O and notebook engines', 'engines.py', 'engines'],
  ['waits for engines to run, pause, resume, terminate and go', 'lifecycle.py', 'lifecycle'],
  ['runs sandbox engines from an image and a template', 'sandbox_engines.py', 'sandbox'],
  ['exposes ports of a sandbox engine and reads its metrics', 'sandbox_ports_metrics.py', 'ports'],
];

/** Runs one client script in its own workspace; resolves to its standard output. */
async function runScript({ version, script, workspace }: ScriptRun): Promise<string> {
  const python = join(CACHE, `python-client-${version}`, 'bin', 'python');
  const env = await clientEnv();
  const { stdout } = await promisify(execFile)(
    python,
    [join(HERE, script), api().gateway.restUrl, `${workspace}-${version.replaceAll('.', '-')}`],
    { env, timeout: 540_000 },
  ).catch((error: unknown) => {
    const out = typeof error === 'object' && error !== null && 'stdout' in error ? String(error.stdout) : '';
    const err =
      typeof error === 'object' && error !== null && 'stderr' in error ? String(error.stderr) : String(error);
    throw new Error(`The client script failed:\n${out}\n${err}`);
  });
  return stdout;
}

interface ScriptRun {
  version: string;
  script: string;
  workspace: string;
}

const RUNS: readonly ScriptRun[] = VERSIONS.flatMap((version) =>
  SCRIPTS.map(([, script, workspace]) => ({ version, script, workspace })),
);
// The scripts run a few at a time (each in its own workspaces, mostly waiting on engines and on
// Python); each test checks its own.
const outcome = runAhead(RUNS, runScript);

describe.each(VERSIONS)('the h2o-engine-manager %s Python client, unmodified', (version) => {
  test.each(SCRIPTS)(
    '%s',
    async (_what, script) => {
      const run = RUNS.find((r) => r.version === version && r.script === script);
      if (run === undefined) throw new Error(`${script} has no run for ${version}`);
      const stdout = await outcome(run);
      expect(stdout).not.toContain('FAIL');
      expect(stdout.trim().split('\n').at(-1)).toBe('all steps passed');
    },
    // The first tests also wait for the runs started before theirs.
    600_000,
  );

  test('reads the Driverless AI license: none until an administrator provides one, then its metadata', async () => {
    const python = join(CACHE, `python-client-${version}`, 'bin', 'python');
    const env = await clientEnv();
    const read = async (): Promise<string> =>
      (
        await promisify(execFile)(python, [join(HERE, 'dai_license.py'), api().gateway.restUrl], { env })
      ).stdout.trim();
    const secrets = api().cluster.kubeConfig.makeApiClient(CoreV1Api);
    await secrets.deleteNamespacedSecret({ name: 'dai-license', namespace: 'compat' }).catch(() => undefined);
    expect(await read()).toBe('none');
    await secrets.createNamespacedSecret({
      namespace: 'compat',
      body: { metadata: { name: 'dai-license' }, stringData: { 'license.sig': LICENSE } },
    });
    expect(JSON.parse(await read())).toEqual({
      license_version: '1',
      serial_number: 4242,
      licensee_organization: 'Example Corp',
      licensee_email: 'ops@example.com',
      licensee_user_id: '77',
      is_h2o_internal_use: false,
      created_by_email: 'sales@example.com',
      creation_date: '2026-01-15',
      product: 'DriverlessAI',
      license_type: 'developer',
      expiration_date: '2027-01-15',
    });
    await secrets.deleteNamespacedSecret({ name: 'dai-license', namespace: 'compat' });
  });
});

/** A made-up license in Driverless AI's readable form, with a signature line the service does not read. */
const LICENSE = [
  'license_version:1',
  'serial_number:4242',
  'licensee_organization:Example Corp',
  'licensee_email:ops@example.com',
  'licensee_user_id:77',
  'is_h2o_internal_use:false',
  'created_by_email:sales@example.com',
  'creation_date:2026/01/15',
  'product:DriverlessAI',
  'license_type:developer',
  'expiration_date:2027/01/15',
  'c2lnbmF0dXJl',
].join('\n');
