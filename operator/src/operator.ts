/**
 * The operator: one controller per engine kind on the shared runtime, fed by one ClusterView
 * that watches the engines and everything they own. A change of an owned object queues its
 * engine's key (read from the object's engine annotation) with the controller of its kind.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { Gauge, Registry } from 'prom-client';
import { daiEngineKind } from './kinds/dai-engine.ts';
import { h2oEngineKind } from './kinds/h2o-engine.ts';
import type { EngineKind, Settings } from './kinds/kind.ts';
import { notebookEngineKind } from './kinds/notebook-engine.ts';
import { sandboxEngineKind } from './kinds/sandbox-engine.ts';
import { KubeClient } from './kube/client.ts';
import { ClusterView } from './kube/cluster-view.ts';
import { EngineReconciler } from './reconcile/reconciler.ts';
import { httpActivityProber, httpEngineAsker } from './activity/prober.ts';
import { startController, type Controller } from './runtime/controller.ts';
import { workspaceOfObjectName } from './kinds/workspace-of.ts';
import { controllerMetrics } from './runtime/metrics.ts';
import type { QueueingConfig } from './queueing/config.ts';
import { startQueueing, type RunningQueueing } from './queueing/queueing.ts';
import { ENGINE_KIND_LABEL } from '../../shared/resources.ts';
import { ENGINE_ANNOTATION } from './desired/workload.ts';

export const ENGINE_KINDS: readonly EngineKind[] = [
  daiEngineKind,
  h2oEngineKind,
  notebookEngineKind,
  sandboxEngineKind,
];

/** How fast the operator may call the apiserver, and with how many reconciles at once. */
export interface Throughput {
  /** Reconciles running at once per kind. */
  workers: number;
  /** Calls per second of the client-side rate limit (≤ 0: none), and its burst. */
  qps: number;
  burst: number;
}

/**
 * Sized for thousands of engines on a shared apiserver: a reconcile reads memory and makes a
 * few calls, so 16 workers per kind keep the apiserver, not the queue, the limit; 100 calls per
 * second (bursts of 200) lets 1,000 engines start in well under a minute of calls while leaving
 * the apiserver to others.
 */
export const DEFAULT_THROUGHPUT: Throughput = { workers: 16, qps: 100, burst: 200 };

export interface OperatorOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  settings: Settings;
  log: Logger;
  registry?: Registry;
  throughput?: Partial<Throughput>;
  /** Whether this replica may write now (its leadership is current); always, when not given. */
  mayAct?: () => boolean;
  /** GPU queueing through Kueue (AIEM_QUEUEING_CONFIG); off when not given. */
  queueing?: QueueingConfig | undefined;
}

export interface Operator {
  registry: Registry;
  view: ClusterView;
  stop(): Promise<void>;
}

/** Starts the engine controllers: the view is listed first, so that no reconcile reads a partial copy. */
export async function startOperator(options: OperatorOptions): Promise<Operator> {
  const registry = options.registry ?? new Registry();
  const { kubeConfig, namespace, log } = options;
  const throughput = { ...DEFAULT_THROUGHPUT, ...options.throughput };
  const metrics = controllerMetrics(registry);
  const kube = new KubeClient({
    kubeConfig,
    namespace,
    metrics,
    qps: throughput.qps,
    burst: throughput.burst,
    log,
    ...(options.mayAct ? { mayAct: options.mayAct } : {}),
  });
  const controllers = new Map<string, Controller>();
  // Engines at their idle limit are asked whether they worked without traffic (kinds with a probe).
  const probeActivity = httpActivityProber({ log });
  // Ready engines of kinds with a serving check are asked before they are first called RUNNING.
  const askEngine = httpEngineAsker({ log });
  const view = new ClusterView({ kubeConfig, namespace, log, kinds: ENGINE_KINDS }, (kind, name) =>
    controllers.get(kind)?.enqueue(name),
  );
  const queueing = await startQueueingIfConfigured(options, kube, (setName) => {
    // A Workload (or a queue position) changed: its StatefulSet's engine is reconciled.
    const set = view.statefulSets.get(setName);
    const kind = set?.metadata?.labels?.[ENGINE_KIND_LABEL];
    const engine = set?.metadata?.annotations?.[ENGINE_ANNOTATION];
    if (kind !== undefined && engine !== undefined) controllers.get(kind)?.enqueue(engine);
  });
  for (const kind of ENGINE_KINDS) {
    const reconciler = new EngineReconciler({
      kube,
      view,
      kind,
      settings: options.settings,
      probeActivity,
      askEngine,
      ...(queueing === undefined ? {} : { queueing }),
    });
    controllers.set(
      kind.kind,
      startController({
        name: kind.kind,
        reconcile: (key) => reconciler.reconcile(key),
        log,
        registry,
        workers: throughput.workers,
        // Workspaces take turns: one creating thousands of engines does not hold up another's.
        groupOf: workspaceOfObjectName,
      }),
    );
  }
  new Gauge({
    name: 'aiem_cached_objects',
    help: 'Objects the operator holds in its watch-fed copies',
    registers: [registry],
    collect() {
      this.set(view.size + (queueing?.size ?? 0));
    },
  });
  await view.start();
  for (const controller of controllers.values()) controller.run();
  return {
    registry,
    view,
    async stop(): Promise<void> {
      await Promise.all([...controllers.values()].map((c) => c.stop()));
      await queueing?.stop();
      await view.stop();
    },
  };
}

/** Queueing, started when configured: its Workloads are listed before any engine is reconciled. */
async function startQueueingIfConfigured(
  options: OperatorOptions,
  kube: KubeClient,
  engineOfSet: (setName: string) => void,
): Promise<RunningQueueing | undefined> {
  if (options.queueing === undefined) return undefined;
  const { kubeConfig, namespace, log } = options;
  log.info({ engines: options.queueing.engines, cohort: options.queueing.cohort }, 'Started GPU queueing');
  return startQueueing({ config: options.queueing, kubeConfig, namespace, log, kube, engineOfSet });
}
