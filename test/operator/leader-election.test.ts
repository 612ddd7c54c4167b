/**
 * Several operator replicas on one cluster: exactly one leads at a time through the Lease, a
 * replica that stops gives the lease up, a crashed one is replaced once its lease has expired,
 * and the process serves its health, readiness and metrics. Last, on the same cluster, which has
 * no CRDs until then: an operator started before its CRDs starts quietly once they are applied.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Writable } from 'node:stream';
import { once } from 'node:events';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoordinationV1Api, CoreV1Api, type V1Lease } from '@kubernetes/client-node';
import { pino } from 'pino';
import { startOperator, type Operator } from '../../operator/src/operator.ts';
import { LeaderElector } from '../../operator/src/runtime/leader-election.ts';
import { freePort } from '../cluster/ports.ts';
import { waitFor } from '../cluster/wait.ts';
import { useCluster } from '../helpers/use-cluster.ts';
import { operatorLeaseHeldBy } from './fixtures.ts';
import { watchUntil } from '../helpers/watch.ts';

const NAMESPACE = 'leases';
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const cluster = useCluster();

beforeAll(async () => {
  await cluster()
    .kubeConfig.makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: NAMESPACE } } });
});

const elector = (name: string, identity: string, leaseDurationMs = 2000, now?: () => Date): LeaderElector =>
  new LeaderElector({
    kubeConfig: cluster().kubeConfig,
    namespace: NAMESPACE,
    name,
    identity,
    leaseDurationMs,
    renewDeadlineMs: Math.round(leaseDurationMs * 0.7),
    retryPeriodMs: 200,
    ...(now ? { now } : {}),
  });

const readLease = (name: string): Promise<V1Lease> =>
  cluster().kubeConfig.makeApiClient(CoordinationV1Api).readNamespacedLease({ name, namespace: NAMESPACE });

describe('LeaderElector', () => {
  test('one replica leads; the other takes over as soon as the leader gives the lease up', async () => {
    const a = await elector('handover', 'a').acquire();
    const b = elector('handover', 'b').acquire();
    const bWon = { value: false };
    void b.then(() => {
      bWon.value = true;
    });
    // While a renews, b keeps waiting: a renewal lands several times within one lease duration.
    await watchUntil<V1Lease>(
      cluster().kubeConfig,
      `/apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases`,
      (e) => e.object.metadata?.name === 'handover' && e.type === 'MODIFIED',
      { what: 'a renewal by a' },
    );
    expect(bWon.value).toBe(false);
    expect((await readLease('handover')).spec?.holderIdentity).toBe('a');
    await a.release();
    const leadershipOfB = await b;
    const lease = await readLease('handover');
    expect(lease.spec?.holderIdentity).toBe('b');
    expect(lease.spec?.leaseTransitions).toBe(1);
    await leadershipOfB.release();
  });

  test('a crashed leader is replaced only once its lease has gone unrenewed for its whole duration', async () => {
    // What a crashed holder leaves: a lease renewed just now, and no further renewals.
    const renewed = new Date();
    const micro = renewed.toISOString().replace(/Z$/, '000Z') as unknown as Date;
    await cluster()
      .kubeConfig.makeApiClient(CoordinationV1Api)
      .createNamespacedLease({
        namespace: NAMESPACE,
        body: {
          metadata: { name: 'crash', namespace: NAMESPACE },
          spec: { holderIdentity: 'crashed', leaseDurationSeconds: 3, acquireTime: micro, renewTime: micro },
        },
      });
    const successor = await elector('crash', 'successor', 3000).acquire();
    const lease = await readLease('crash');
    expect(lease.spec?.holderIdentity).toBe('successor');
    expect(new Date(String(lease.spec?.acquireTime)).getTime()).toBeGreaterThanOrEqual(
      renewed.getTime() + 3000,
    );
    await successor.release();
  });

  test('a leader stops acting once it has not renewed within the renew deadline, before its lease can expire', async () => {
    // The clock of a process that was paused (SIGSTOP) or starved: time jumps past the deadline.
    const clock = { skewMs: 0 };
    const now = (): Date => new Date(Date.now() + clock.skewMs);
    const leadership = await elector('stall', 'stalled', 10_000, now).acquire();
    expect(leadership.mayAct()).toBe(true);
    clock.skewMs = 8_000;
    // Past renewDeadline (7 s) since the last renewal, and still inside the lease (10 s): no
    // rival may have it yet, and this replica already acts no more.
    expect(leadership.mayAct()).toBe(false);
    await leadership.lost;
    expect(leadership.mayAct()).toBe(false);
    await leadership.release();
  });

  test('timing that cannot keep two leaders apart is refused', () => {
    const make = (leaseDurationMs: number, renewDeadlineMs: number, retryPeriodMs: number) => () =>
      new LeaderElector({
        kubeConfig: cluster().kubeConfig,
        namespace: NAMESPACE,
        name: 'x',
        identity: 'x',
        leaseDurationMs,
        renewDeadlineMs,
        retryPeriodMs,
      });
    expect(make(10_000, 10_000, 2_000)).toThrow(/lease duration must be longer than the renew deadline/);
    expect(make(15_000, 2_000, 2_000)).toThrow(/renew deadline must be longer than the retry period/);
    expect(make(15_000, 10_000, 2_000)).not.toThrow();
  });

  test('a replica restarted under the same identity takes its own lease back at once', async () => {
    const first = await elector('restart', 'same', 60_000).acquire();
    // The first process is gone without releasing; its successor has the same identity.
    const again = await elector('restart', 'same', 60_000).acquire();
    expect((await readLease('restart')).spec?.holderIdentity).toBe('same');
    await again.release();
    await first.release();
  });
});

/** An operator process of its own, on its own health port. */
async function operatorProcess(identity: string): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [resolve(ROOT, 'operator/src/main.ts')], {
    env: {
      ...process.env,
      KUBECONFIG: cluster().kubeconfigPath,
      AIEM_NAMESPACE: NAMESPACE,
      AIEM_OPERATOR_HOST: '127.0.0.1',
      AIEM_OPERATOR_PORT: String(port),
      AIEM_OPERATOR_ID: identity,
      AIEM_LEASE_DURATION_MS: '3000',
      AIEM_LEASE_RENEW_DEADLINE_MS: '2000',
      AIEM_LEASE_RETRY_PERIOD_MS: '500',
      AIEM_LOG_LEVEL: 'silent',
    },
    stdio: 'ignore',
  });
  return { child, url: `http://127.0.0.1:${port}` };
}

/** The body of a GET once the process answers at all. */
function answer(url: string): Promise<{ status: number; text: string }> {
  return waitFor(
    async () => {
      const response = await fetch(url).catch(() => undefined);
      return response && { status: response.status, text: await response.text() };
    },
    { what: `an answer from ${url}`, timeoutMs: 30_000 },
  );
}

const holderIs = (identity: string): Promise<V1Lease> =>
  operatorLeaseHeldBy(cluster().kubeConfig, NAMESPACE, identity);

/**
 * Waits until the replica reports itself leading: the Lease shows the new holder as soon as its
 * write lands, a moment before the process has its answer and starts its controllers.
 */
const reportsLeading = (url: string): Promise<true> =>
  waitFor(async () => ((await answer(`${url}/readyz`)).text === 'leading\n' ? true : undefined), {
    what: `${url} to report itself leading`,
    timeoutMs: 30_000,
  });
test('operator processes: one leads and serves metrics, the other stands by and leads when the first stops', async () => {
  const a = await operatorProcess('replica-a');
  await holderIs('replica-a');
  const b = await operatorProcess('replica-b');
  try {
    expect(await answer(`${a.url}/healthz`)).toEqual({ status: 200, text: 'ok\n' });
    await reportsLeading(a.url);
    // The standby is ready once its own check of the apiserver has answered (on a loaded machine
    // its first one may time out, as a kubelet's probe would see).
    const ready = await waitFor(
      async () => {
        const readiness = await answer(`${b.url}/readyz`);
        return readiness.status === 200 ? readiness : undefined;
      },
      { what: `${b.url} to report itself a ready standby`, timeoutMs: 30_000 },
    );
    expect(ready).toEqual({ status: 200, text: 'standby\n' });
    const metrics = await answer(`${a.url}/metrics`);
    expect(metrics.text).toContain('aiem_reconcile_total');
    expect(metrics.text).toContain('aiem_reconcile_duration_seconds');
    for (const controller of ['DAIEngine', 'H2OEngine', 'NotebookEngine'])
      expect(metrics.text).toContain(`aiem_queue_depth{controller="${controller}"}`);
    // A graceful stop gives the lease up: the standby leads without waiting for it to expire.
    a.child.kill('SIGTERM');
    await once(a.child, 'exit');
    await holderIs('replica-b');
    await reportsLeading(b.url);
  } finally {
    a.child.kill('SIGKILL');
    b.child.kill('SIGTERM');
    if (b.child.exitCode === null) await once(b.child, 'exit');
  }
}, 90_000);

/**
 * A standby is ready only while it could take over: while the apiserver answers its lease reads.
 * It says so once when it loses the apiserver and once when it has it again, however many
 * attempts fail in between.
 */
test('a standby operator is unready while the apiserver is down, and logs the loss and the return once each', async () => {
  const namespace = 'standby';
  await cluster()
    .kubeConfig.makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: namespace } } });
  // Another replica leads, for longer than the test: this one stays a standby throughout.
  const renewTime = new Date().toISOString().replace(/Z$/, '000Z') as unknown as Date;
  await cluster()
    .kubeConfig.makeApiClient(CoordinationV1Api)
    .createNamespacedLease({
      namespace,
      body: {
        metadata: { name: 'ai-engine-manager-operator', namespace },
        spec: { holderIdentity: 'elsewhere', leaseDurationSeconds: 600, acquireTime: renewTime, renewTime },
      },
    });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/readyz`;
  const child = spawn(process.execPath, [resolve(ROOT, 'operator/src/main.ts')], {
    env: {
      ...process.env,
      KUBECONFIG: cluster().kubeconfigPath,
      AIEM_NAMESPACE: namespace,
      AIEM_OPERATOR_HOST: '127.0.0.1',
      AIEM_OPERATOR_PORT: String(port),
      AIEM_OPERATOR_ID: 'standby',
      AIEM_LEASE_DURATION_MS: '3000',
      AIEM_LEASE_RENEW_DEADLINE_MS: '2000',
      AIEM_LEASE_RETRY_PERIOD_MS: '200',
      AIEM_LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const lines: { msg?: string; level?: number }[] = [];
  child.stdout.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n').filter(Boolean))
      lines.push(JSON.parse(line) as { msg?: string; level?: number });
  });
  const readiness = (status: number, text: string): Promise<true> =>
    waitFor(
      async () => {
        const { status: got, text: body } = await answer(url);
        return got === status && body === text ? true : undefined;
      },
      { what: `${url} to answer ${status} ${JSON.stringify(text)}`, timeoutMs: 30_000 },
    );
  const said = (msg: string): number => lines.filter((l) => l.msg === msg).length;
  try {
    await readiness(200, 'standby\n');
    await cluster().restartApiserver(async () => {
      await readiness(503, 'standby; the apiserver does not answer\n');
      // Several attempts fail while it is down; the loss is logged once.
      await waitFor(() => Promise.resolve(said('Lost contact with the apiserver') === 1 || undefined), {
        what: 'the loss logged',
      });
    });
    await readiness(200, 'standby\n');
    await waitFor(() => Promise.resolve(said('Regained contact with the apiserver') >= 1 || undefined), {
      what: 'the return logged',
    });
    // A starting apiserver may refuse a request or two before it serves: each change is logged
    // once, never each attempt.
    expect(said('Lost contact with the apiserver')).toBe(said('Regained contact with the apiserver'));
    expect(lines.find((l) => l.msg === 'Lost contact with the apiserver')?.level).toBe(40);
  } finally {
    child.kill('SIGTERM');
    if (child.exitCode === null) await once(child, 'exit');
  }
}, 90_000);

/**
 * A quiet, clear start: an operator started before its CRDs are installed (as when `helm install`
 * creates CRDs and Deployments together) waits until the cluster serves its kinds, saying so once
 * per collection in one line, and starts once they are served — no warning, no error and no
 * stack trace for what a settling cluster answers.
 */
describe('an operator started before its CRDs', () => {
  let operator: Operator | undefined;
  afterAll(async () => {
    await operator?.stop();
  });

  test('waits for them, logging one line per collection and no stack, then starts', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean))
          lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const starting = startOperator({
      kubeConfig: cluster().kubeConfig,
      namespace: NAMESPACE,
      settings: { publicUrl: 'http://127.0.0.1:8080' },
      log: pino({ level: 'info' }, sink),
    });
    const waiting = (): string[] =>
      lines
        .filter((l) => l['msg'] === 'not listed yet; retrying until the cluster serves it')
        .map((l) => String(l['path']));
    // The engine kinds are not served yet: each of their collections says so.
    const engineKinds = (): string[] => waiting().filter((w) => w.includes('engine.h2o.ai'));
    await waitFor(() => Promise.resolve(engineKinds().length >= 3 || undefined), {
      what: 'the engine kinds reported not served',
      timeoutMs: 30_000,
    });
    await cluster().kubectl(['apply', '-f', `${ROOT}/crds`]);
    operator = await starting;
    const view = operator.view;
    await waitFor(() => Promise.resolve(view.synced || undefined), {
      what: 'the copies listed',
      timeoutMs: 60_000,
    });
    // One line per collection, however often it retried, and nothing louder.
    expect(engineKinds().sort()).toEqual(
      ['daiengines', 'h2oengines', 'notebookengines', 'sandboxengines'].map(
        (p) => expect.stringContaining(`/${p}`) as unknown as string,
      ),
    );
    expect(new Set(waiting()).size).toBe(waiting().length);
    expect(lines.filter((l) => Number(l['level']) >= 40)).toEqual([]);
    expect(lines.filter((l) => JSON.stringify(l).includes('"stack"'))).toEqual([]);
  });
});
