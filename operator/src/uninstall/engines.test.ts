import {
  deleteEngines,
  FINALIZER,
  releaseEngines,
  UninstallIncomplete,
  type EngineRef,
  type UninstallOptions,
  type UninstallPort,
} from './engines.ts';

/**
 * Engines in memory, with an operator that (while `operatorRunning`) finishes a deleted engine
 * `cleanupRounds` lists later and puts its finalizer back on engines that lack it.
 */
class FakeCluster implements UninstallPort {
  engines = new Map<string, EngineRef & { countdown?: number }>();
  operatorRunning = true;
  operatorPodsLeft = 0;
  cleanupRounds = 1;
  private version = 1;

  add(plural: string, name: string, finalizers: string[] = [FINALIZER]): void {
    this.engines.set(`${plural}/${name}`, {
      plural,
      name,
      finalizers,
      resourceVersion: String(this.version++),
      deleting: false,
      state: 'STATE_RUNNING',
    });
  }

  listEngines(): Promise<EngineRef[]> {
    for (const [key, engine] of this.engines) {
      if (this.operatorRunning && !engine.deleting && !engine.finalizers.includes(FINALIZER)) {
        engine.finalizers = [...engine.finalizers, FINALIZER];
        engine.resourceVersion = String(this.version++);
      }
      if (engine.countdown !== undefined && this.operatorRunning && --engine.countdown <= 0)
        this.engines.delete(key);
    }
    return Promise.resolve([...this.engines.values()].map((e) => ({ ...e })));
  }

  deleteEngine(engine: EngineRef): Promise<void> {
    const stored = this.engines.get(`${engine.plural}/${engine.name}`);
    if (stored === undefined) return Promise.resolve();
    if (stored.finalizers.length === 0) this.engines.delete(`${engine.plural}/${engine.name}`);
    else Object.assign(stored, { deleting: true, state: 'STATE_DELETING', countdown: this.cleanupRounds });
    return Promise.resolve();
  }

  releaseEngine(engine: EngineRef): Promise<void> {
    const stored = this.engines.get(`${engine.plural}/${engine.name}`);
    if (stored === undefined || stored.resourceVersion !== engine.resourceVersion) return Promise.resolve();
    stored.finalizers = stored.finalizers.filter((f) => f !== FINALIZER);
    stored.resourceVersion = String(this.version++);
    if (stored.deleting && stored.finalizers.length === 0)
      this.engines.delete(`${engine.plural}/${engine.name}`);
    return Promise.resolve();
  }

  operatorPods(): Promise<string[]> {
    if (this.operatorPodsLeft > 0 && --this.operatorPodsLeft === 0) this.operatorRunning = false;
    return Promise.resolve(this.operatorRunning ? ['aiem-operator-0'] : []);
  }
}

function options(): UninstallOptions & { slept: number[] } {
  let now = 0;
  const slept: number[] = [];
  return {
    namespace: 'aiem-system',
    timeoutMs: 10_000,
    intervalMs: 2_000,
    operatorSelector: 'app.kubernetes.io/component=operator',
    clock: {
      now: () => now,
      sleep: (ms) => {
        slept.push(ms);
        now += ms;
        return Promise.resolve();
      },
    },
    log: { info: () => undefined },
    slept,
  };
}

test('deleteEngines() deletes every engine of every kind and resolves once the operator has let them go', async () => {
  const cluster = new FakeCluster();
  cluster.cleanupRounds = 3;
  cluster.add('notebookengines', 'lab.nb');
  cluster.add('h2oengines', 'lab.cloud');
  expect(await deleteEngines(cluster, options())).toBe(2);
  expect(cluster.engines.size).toBe(0);
});

test('deleteEngines() fails after its timeout naming the engines left and how to check the operator', async () => {
  const cluster = new FakeCluster();
  cluster.operatorRunning = false;
  cluster.add('notebookengines', 'lab.nb');
  const run = options();
  const error = await deleteEngines(cluster, run).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(UninstallIncomplete);
  expect(String(error)).toContain(
    '1 engine(s) of namespace "aiem-system" still exist after 10 s: notebookengines/lab.nb (STATE_DELETING, deleting)',
  );
  expect(String(error)).toContain('kubectl -n aiem-system get pods -l app.kubernetes.io/component=operator');
  expect(run.slept.reduce((a, b) => a + b, 0)).toBe(10_000);
});

test('releaseEngines() waits for the operator to stop, then takes only its finalizer off every engine', async () => {
  const cluster = new FakeCluster();
  cluster.operatorPodsLeft = 3;
  cluster.add('notebookengines', 'lab.nb', [FINALIZER, 'example.com/backup']);
  cluster.add('daiengines', 'lab.dai');
  expect(await releaseEngines(cluster, options())).toBe(2);
  expect([...cluster.engines.values()].map((e) => [e.name, e.finalizers])).toEqual([
    ['lab.nb', ['example.com/backup']],
    ['lab.dai', []],
  ]);
});

test('releaseEngines() fails when the operator does not stop: it would put the finalizer back', async () => {
  const cluster = new FakeCluster();
  cluster.add('notebookengines', 'lab.nb');
  await expect(releaseEngines(cluster, options())).rejects.toThrow(
    /the operator's pods \(aiem-operator-0\) still exist after 10 s/,
  );
  expect(cluster.engines.get('notebookengines/lab.nb')?.finalizers).toEqual([FINALIZER]);
});
