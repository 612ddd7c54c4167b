/**
 * Upgrading a release: chart 1.2.0 — the first release, taken from the commit it was released at —
 * installed on the local control plane with profiles, versions and engines (running and paused),
 * then `helm upgrade` to this chart: every resource is kept with its uid, spec and state, the
 * engines' workloads are not replaced, and the product serves and runs them on. Then the
 * supported way to move to another release name: uninstall (the CRDs and every resource stay)
 * and install with `crds.install=false`.
 *
 * The gateway and operator run as processes of this checkout beside the cluster (the chart's pods
 * are simulated): what is upgraded here is the chart and what it owns.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { load } from 'js-yaml';
import { waitFor } from '../cluster/wait.ts';
import type { RestResponse } from '../helpers/api-server.ts';
import { useCluster } from '../helpers/use-cluster.ts';
import { ProductProcess, stopAll } from '../helpers/product-process.ts';
import { startIdentityProvider, type IdentityProvider } from '../identity/provider.ts';
import { ok, PROFILE } from '../operator/fixtures.ts';
import { VERSION } from '../helpers/image.ts';
import { ALL_KINDS } from './permissions.ts';
import { adminRest, CHART, helm, oidcValues, ROOT, valuesFile } from './helm.ts';

/** Chart 1.2.0 as released: the last commit of that version. */
const PREVIOUS = { version: '1.2.0', commit: '54eaf9af4b8c7b7ff00e47ae5406aa8c52a76bf6' };
const NAMESPACE = 'aiem-upgrade';
const RELEASE = 'aiem';

const scratch = mkdtempSync(join(tmpdir(), 'aiem-chart-upgrade-'));
const processes: ProductProcess[] = [];
let provider: IdentityProvider | undefined;
afterAll(async () => {
  await stopAll(processes);
  await provider?.stop();
  rmSync(scratch, { recursive: true, force: true });
});
const cluster = useCluster();
const kubectl = (args: readonly string[]): Promise<string> => cluster().kubectl(args);
const kubeconfig = (): { kubeconfig: string } => ({ kubeconfig: cluster().kubeconfigPath });

function identity(): IdentityProvider {
  if (provider === undefined) throw new Error('The identity provider is not running');
  return provider;
}

const values = (): object => oidcValues(identity());
/**
 * This chart's values: the gateway and operator of this test act as the cluster's admin, where
 * the chart's pods act as its ServiceAccounts, which its admission webhooks leave alone.
 */
const currentValues = (): object => ({ ...values(), admission: { exemptUsers: ['cluster-admin'] } });

/** The chart of a commit, extracted from git history. */
async function chartAt(commit: string): Promise<string> {
  const archive = join(scratch, 'chart.tar');
  await promisify(execFile)('git', ['-C', ROOT, 'archive', '--format=tar', '-o', archive, commit, 'charts/ai-engine-manager']);
  await promisify(execFile)('tar', ['-xf', archive, '-C', scratch]);
  return join(scratch, 'charts', 'ai-engine-manager');
}

/** What must survive: every resource of every kind by kind and name, with its uid, spec and state. */
async function resources(): Promise<Record<string, unknown>> {
  const kept: Record<string, unknown> = {};
  for (const plural of ALL_KINDS) {
    const list = JSON.parse(await kubectl(['get', `${plural}.engine.h2o.ai`, '-n', NAMESPACE, '-o', 'json'])) as {
      items: { metadata: { name: string; uid: string }; spec: unknown; status?: { state?: string } }[];
    };
    for (const item of list.items)
      kept[`${plural}/${item.metadata.name}`] = { uid: item.metadata.uid, spec: item.spec, state: item.status?.state };
  }
  return kept;
}

/** The engines' StatefulSets by name and uid: replaced sets would restart engines. */
async function workloads(): Promise<string[]> {
  const list = JSON.parse(
    await kubectl(['get', 'statefulsets', '-n', NAMESPACE, '-l', 'engine.h2o.ai/engine-kind', '-o', 'json']),
  ) as { items: { metadata: { name: string; uid: string } }[] };
  return list.items.map((s) => `${s.metadata.name}=${s.metadata.uid}`).sort();
}

/**
 * The CRDs of kinds the previous chart lacked: this checkout's gateway serves them and waits for
 * them. They are put in place as the release's own (Helm's ownership metadata), as the upgrade
 * would make them, so that the upgrade adopts them.
 */
async function adoptableNewCrds(previous: string): Promise<void> {
  const known = new Set(readdirSync(join(previous, 'templates', 'crds')));
  for (const file of readdirSync(join(ROOT, 'crds')).filter((f) => !known.has(f))) {
    const crd = load(readFileSync(join(ROOT, 'crds', file), 'utf8')) as {
      metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
    };
    crd.metadata.labels = { ...crd.metadata.labels, 'app.kubernetes.io/managed-by': 'Helm' };
    crd.metadata.annotations = {
      ...crd.metadata.annotations,
      'meta.helm.sh/release-name': RELEASE,
      'meta.helm.sh/release-namespace': NAMESPACE,
    };
    await cluster().kubectl(['apply', '-f', '-'], JSON.stringify(crd));
  }
  await kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
}

let rest: (method: string, path: string, body?: unknown) => Promise<RestResponse>;

beforeAll(async () => {
  provider = await startIdentityProvider({ accounts: [{ id: 'admin', name: 'Ada Admin', roles: ['admin'] }] });
  const previous = await chartAt(PREVIOUS.commit);
  const chart = load(readFileSync(join(previous, 'Chart.yaml'), 'utf8')) as { version: string };
  expect(chart.version).toBe(PREVIOUS.version);
  await helm(
    ['install', RELEASE, previous, '--namespace', NAMESPACE, '--create-namespace', '-f', valuesFile(values()), '--wait', '--timeout', '3m'],
    kubeconfig(),
  );
  await adoptableNewCrds(previous);
  const env = {
    PATH: process.env['PATH'] ?? '',
    KUBECONFIG: cluster().kubeconfigPath,
    AIEM_NAMESPACE: NAMESPACE,
    AIEM_LOG_LEVEL: 'info',
  };
  const gateway = new ProductProcess('gateway', 'gateway/src/main.ts', {
    ...env,
    AIEM_HOST: '127.0.0.1',
    AIEM_REST_PORT: '0',
    AIEM_GRPC_PORT: '0',
    AIEM_SHUTDOWN_DELAY_MS: '0',
    AIEM_OIDC_ISSUER_URL: identity().issuer,
    AIEM_OIDC_AUDIENCE: identity().audience,
    AIEM_OIDC_ROLES_CLAIM: identity().rolesClaim,
  });
  processes.push(gateway);
  processes.push(
    new ProductProcess('operator', 'operator/src/main.ts', { ...env, AIEM_OPERATOR_HOST: '127.0.0.1', AIEM_OPERATOR_PORT: '0' }),
  );
  const base = String((await gateway.waitForLog('Started gateway'))['restUrl']);
  await gateway.waitForLog('caches in sync');
  rest = adminRest(base, identity());
}, 240_000);

/** Whether the gateway answered that it is still catching up with the cluster (503, retry shortly). */
function catchingUp(response: RestResponse): boolean {
  const details = response.json['details'];
  return (
    response.status === 503 &&
    Array.isArray(details) &&
    details.some((d: { reason?: string }) => d.reason === 'CACHE_NOT_SYNCED')
  );
}

/**
 * A call as a client makes it: while the gateway answers that it is catching up with the cluster
 * (a watch listing again on a loaded machine, right after an install), the call is made again
 * shortly, as that answer asks; any other answer counts.
 */
const call = (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> =>
  ok(
    waitFor(
      async () => {
        const response = await rest(method, path, body);
        return catchingUp(response) ? undefined : response;
      },
      { what: `${method} ${path} once the gateway has caught up`, timeoutMs: 60_000, intervalMs: 250 },
    ),
  );

const state = (id: string, wanted: string): Promise<string> =>
  kubectl(['wait', '-n', NAMESPACE, '--timeout=60s', `daiengines.engine.h2o.ai/team.${id}`, `--for=jsonpath={.status.state}=${wanted}`]);

test(`resources made under chart ${PREVIOUS.version} survive helm upgrade to this chart, and the product runs them on`, async () => {
  await call('POST', '/v1/workspaces/global/daiEngineProfiles?daiEngineProfileId=standard', PROFILE);
  await call('POST', '/v1/workspaces/global/daiEngineVersions?daiEngineVersionId=1.10.6', { image: 'dai:1.10.6', aliases: ['latest'] });
  await call('POST', '/v1/workspaces/global/notebookEngineImages?notebookEngineImageId=jupyter', { image: 'jupyter:1', enabled: true });
  const engine = { profile: 'workspaces/global/daiEngineProfiles/standard', daiEngineVersion: 'workspaces/global/daiEngineVersions/latest' };
  await call('POST', '/v1/workspaces/team/daiEngines?daiEngineId=running', engine);
  await call('POST', '/v1/workspaces/team/daiEngines?daiEngineId=paused', engine);
  await state('running', 'STATE_RUNNING');
  await state('paused', 'STATE_RUNNING');
  await call('POST', `/v1/${encodeURIComponent('workspaces/team/daiEngines/paused')}:pause`, {});
  await state('paused', 'STATE_PAUSED');
  const before = await resources();
  expect(Object.keys(before).sort()).toEqual([
    'daiengineprofiles/global.standard',
    'daiengines/team.paused',
    'daiengines/team.running',
    'daiengineversions/global.1.10.6',
    'notebookengineimages/global.jupyter',
  ]);
  const sets = await workloads();

  await helm(['upgrade', RELEASE, CHART, '--namespace', NAMESPACE, '-f', valuesFile(currentValues()), '--wait', '--timeout', '3m'], kubeconfig());
  const history = JSON.parse(await helm(['history', RELEASE, '-n', NAMESPACE, '-o', 'json'], kubeconfig())) as {
    chart: string;
    status: string;
  }[];
  expect(history.map((h) => [h.chart, h.status])).toEqual([
    [`ai-engine-manager-${PREVIOUS.version}`, 'superseded'],
    [`ai-engine-manager-${VERSION}`, 'deployed'],
  ]);
  expect(await resources()).toEqual(before);
  expect(await workloads()).toEqual(sets);
  // This chart's additions arrived beside them.
  await kubectl(['get', 'poddisruptionbudget', `${RELEASE}-ai-engine-manager-gateway`, '-n', NAMESPACE]);
  // The API serves what was there, and engines go on changing state.
  const listed = await call('GET', '/v1/workspaces/team/daiEngines');
  expect((listed['daiEngines'] as { name: string; state: string }[]).map((e) => [e.name, e.state]).sort()).toEqual([
    ['workspaces/team/daiEngines/paused', 'STATE_PAUSED'],
    ['workspaces/team/daiEngines/running', 'STATE_RUNNING'],
  ]);
  await call('POST', `/v1/${encodeURIComponent('workspaces/team/daiEngines/paused')}:resume`, {});
  await state('paused', 'STATE_RUNNING');
}, 240_000);

test('helm uninstall keeps the CRDs and every resource; another release name installs with crds.install=false and serves them', async () => {
  const before = await resources();
  await helm(['uninstall', RELEASE, '--namespace', NAMESPACE, '--wait', '--timeout', '2m'], kubeconfig());
  expect(await resources()).toEqual(before);
  // The kept CRDs still name the old release as their owner, so a new name leaves them alone.
  const refused = await helm(['install', 'renamed', CHART, '--namespace', NAMESPACE, '-f', valuesFile(currentValues())], kubeconfig()).then(
    () => '',
    (error: unknown) => String(error),
  );
  expect(refused).toMatch(/invalid ownership metadata/);
  await helm(
    ['install', 'renamed', CHART, '--namespace', NAMESPACE, '-f', valuesFile({ ...currentValues(), crds: { install: false } }), '--wait', '--timeout', '3m'],
    kubeconfig(),
  );
  expect(await resources()).toEqual(before);
  await waitFor(async () => ((await call('GET', '/v1/workspaces/team/daiEngines'))['daiEngines'] as unknown[]).length === 2 || undefined, {
    what: 'the engines listed',
    timeoutMs: 30_000,
  });
}, 240_000);
