/**
 * Running caps across gateway replicas: two gateway processes (gateway/src/main.ts, as the chart
 * runs it) on one cluster, each with its own caches, and 50 creates at once spread over both
 * against a profile that lets a user run 3 engines: exactly 3 are created, whichever replica
 * each create reaches. Locks inside one process could not do that; the Lease per user and
 * profile does.
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api } from '@kubernetes/client-node';
import { defineCatalogue, engineBodies, ok, profile, type RestCaller } from '../auth/catalogue.ts';
import { waitFor } from '../cluster/wait.ts';
import { useCluster } from '../helpers/use-cluster.ts';
import { ProductProcess, stopAll } from '../helpers/product-process.ts';
import { startIdentityProvider, type IdentityProvider } from '../identity/provider.ts';

const NAMESPACE = 'quota-replicas';
const W = 'team';
const CRDS = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'crds');
const CREATES = 50;
const CAP = 3;

const replicas: ProductProcess[] = [];
let provider: IdentityProvider | undefined;
// Declared before the cluster's hook, so that the gateways stop while the cluster still runs.
afterAll(async () => {
  await stopAll(replicas);
  await provider?.stop();
});
const cluster = useCluster();

/** A REST call to a replica; the HTTP status and body. */
async function call(
  base: string,
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

test(`${CREATES} creates spread over two gateway processes against maxRunningEngines ${CAP}: exactly ${CAP} succeed`, async () => {
  await cluster().kubectl(['apply', '-f', CRDS]);
  await cluster().kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
  await cluster()
    .kubeConfig.makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: NAMESPACE } } });
  provider = await startIdentityProvider({
    accounts: [
      { id: 'admin', name: 'Ada Admin', roles: ['admin'] },
      { id: 'alice', name: 'Alice Smith', roles: ['data-scientist'] },
    ],
  });
  const env = {
    PATH: process.env['PATH'] ?? '',
    KUBECONFIG: cluster().kubeconfigPath,
    AIEM_NAMESPACE: NAMESPACE,
    AIEM_HOST: '127.0.0.1',
    AIEM_REST_PORT: '0',
    AIEM_GRPC_PORT: '0',
    // No load balancer to turn away here: stop at once.
    AIEM_SHUTDOWN_DELAY_MS: '0',
    AIEM_LOG_LEVEL: 'info',
    AIEM_OIDC_ISSUER_URL: provider.issuer,
    AIEM_OIDC_AUDIENCE: provider.audience,
    AIEM_OIDC_ROLES_CLAIM: provider.rolesClaim,
  };
  for (const name of ['gateway-a', 'gateway-b'])
    replicas.push(new ProductProcess(name, 'gateway/src/main.ts', env));
  const bases = await Promise.all(
    replicas.map(async (replica) => {
      const started = await replica.waitForLog('Started gateway');
      await replica.waitForLog('caches in sync');
      return String(started['restUrl']);
    }),
  );
  const [a = '', b = ''] = bases;
  const admin = await provider.accessToken('admin');
  const alice = await provider.accessToken('alice');
  const headers = { Authorization: `Bearer ${admin}` };
  // The administrator defines the catalogue through replica A.
  const replicaA: RestCaller = {
    rest: (method, path, body, extra) =>
      call(a, method, path, extra?.['Authorization']?.slice(7) ?? admin, body),
  };
  await defineCatalogue(replicaA, { workspace: W, headers });
  await ok(replicaA, {
    method: 'POST',
    path: `/v1/workspaces/${W}/daiEngineProfiles?daiEngineProfileId=capped`,
    body: profile({ maxRunningEngines: CAP }),
    headers,
  });
  const body = { ...engineBodies(W).dai, profile: `workspaces/${W}/daiEngineProfiles/capped` };
  const answers = await Promise.all(
    Array.from({ length: CREATES }, (_, i) =>
      call(i % 2 === 0 ? a : b, 'POST', `/v1/workspaces/${W}/daiEngines?daiEngineId=e${i}`, alice, body),
    ),
  );
  const statuses = answers.map((answer) => answer.status);
  expect(statuses.filter((s) => s === 200)).toHaveLength(CAP);
  // Every other create is refused for the cap, not for anything else.
  expect(answers.filter((answer) => answer.status !== 200).map((answer) => answer.json['code'])).toEqual(
    Array.from({ length: CREATES - CAP }, () => 8),
  );
  // Both replicas list the same three engines (each learns of the other's with its watch).
  for (const base of [a, b]) {
    await waitFor(
      async () =>
        (await call(base, 'GET', `/v1/workspaces/${W}/daiEngines`, alice)).json['totalSize'] === CAP
          ? true
          : undefined,
      { what: `${CAP} engines listed by ${base}`, timeoutMs: 10_000 },
    );
  }
});
