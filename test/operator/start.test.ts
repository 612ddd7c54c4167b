/**
 * A quiet, clear start: an operator started before its CRDs are installed (as when `helm install`
 * creates CRDs and Deployments together) waits until the cluster serves its kinds, saying so once
 * per collection in one line, and starts its controllers once they are served — no warning, no
 * error and no stack trace for what a settling cluster answers.
 */
import { Writable } from 'node:stream';
import { CoreV1Api } from '@kubernetes/client-node';
import { pino } from 'pino';
import { startOperator, type Operator } from '../../operator/src/operator.ts';
import { waitFor } from '../cluster/wait.ts';
import { useCluster } from '../helpers/use-cluster.ts';
import { ROOT } from '../charts/helm.ts';

const NAMESPACE = 'operator-start';
const cluster = useCluster();
let operator: Operator | undefined;
afterAll(async () => {
  await operator?.stop();
});

test('waits for its CRDs, logging one line per collection and no stack, then starts', async () => {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean))
        lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  await cluster()
    .kubeConfig.makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: NAMESPACE } } });
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
  expect(
    waiting()
      .filter((w) => w.includes('engine.h2o.ai'))
      .sort(),
  ).toEqual(
    ['daiengines', 'h2oengines', 'notebookengines'].map(
      (p) => expect.stringContaining(`/${p}`) as unknown as string,
    ),
  );
  expect(new Set(waiting()).size).toBe(waiting().length);
  expect(lines.filter((l) => Number(l['level']) >= 40)).toEqual([]);
  expect(lines.filter((l) => JSON.stringify(l).includes('"stack"'))).toEqual([]);
});
