/**
 * What `helm uninstall` does with the engines of the release namespace, run by the chart's
 * uninstall hook (templates/uninstall/hook.yaml): every engine carries the operator's cleanup
 * finalizer, and once the operator is gone nothing would remove it — deleting an engine, or its
 * CustomResourceDefinition, would wait forever. Two ways out, chosen by the chart's
 * `uninstall.engines`:
 *
 * - `delete` (before the release's objects go): delete every engine while the operator still
 *   runs, and wait until it has deleted their pods, Services and data volumes and let them go;
 * - `keep` (after they went): once the operator's pods are gone, take the finalizer off every
 *   engine. Engines, their workloads and their data volumes stay as they are; deleting an engine
 *   later deletes what it owns through Kubernetes' garbage collector, and a new release in the
 *   namespace manages the engines again (the operator puts its finalizer back).
 *
 * The Kubernetes calls are behind {@link UninstallPort}, so the steps are tested without a cluster.
 */
import { RESOURCE_KINDS } from '../../../shared/resources.ts';
import { FINALIZER } from '../reconcile/reconciler.ts';

/** The engine kinds' plurals: the kinds the operator puts its finalizer on. */
export const ENGINE_PLURALS: readonly string[] = [
  RESOURCE_KINDS.DAIEngine.plural,
  RESOURCE_KINDS.H2OEngine.plural,
  RESOURCE_KINDS.NotebookEngine.plural,
  RESOURCE_KINDS.SandboxEngine.plural,
];

export { FINALIZER };

/** One engine custom resource as the uninstall steps see it. */
export interface EngineRef {
  plural: string;
  name: string;
  resourceVersion: string;
  finalizers: readonly string[];
  /** Whether its deletion has begun (metadata.deletionTimestamp is set). */
  deleting: boolean;
  /** status.state, for the failure message. */
  state: string | undefined;
}

/** The Kubernetes calls of the uninstall steps, in the release namespace. */
export interface UninstallPort {
  /** Every engine of every engine kind; a kind whose CRD is not served has none. */
  listEngines(): Promise<EngineRef[]>;
  /** Deletes the engine; one already gone is no error. */
  deleteEngine(engine: EngineRef): Promise<void>;
  /**
   * Takes the cleanup finalizer off, at the engine's resourceVersion; one gone or changed since
   * is no error (the next round sees it again).
   */
  releaseEngine(engine: EngineRef): Promise<void>;
  /** The names of the release's operator pods that still exist. */
  operatorPods(): Promise<string[]>;
}

/** Time, injected so that tests do not sleep. */
export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

/** Structured progress messages (a pino logger fits). */
export interface ProgressLog {
  info(fields: object, message: string): void;
}

/** Options of both uninstall steps. */
export interface UninstallOptions {
  namespace: string;
  /** How long the step may take before it fails. */
  timeoutMs: number;
  /** How often it looks again. */
  intervalMs: number;
  /** The label selector of the operator's pods, for the failure message and the keep step. */
  operatorSelector: string;
  clock: Clock;
  log: ProgressLog;
}

/** The uninstall could not finish in time; the message says what is left and what to do. */
export class UninstallIncomplete extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UninstallIncomplete';
  }
}

const describe = (engines: readonly EngineRef[]): string =>
  engines
    .slice(0, 10)
    .map((e) => `${e.plural}/${e.name} (${e.state ?? 'no state'}${e.deleting ? ', deleting' : ''})`)
    .join(', ') + (engines.length > 10 ? `, and ${engines.length - 10} more` : '');

/**
 * Deletes every engine and resolves once none is left: the operator has deleted each one's
 * workloads and data volumes and removed its finalizer. Resolves to the number deleted.
 */
export async function deleteEngines(port: UninstallPort, options: UninstallOptions): Promise<number> {
  const { clock, log } = options;
  const deadline = clock.now() + options.timeoutMs;
  const asked = new Set<string>();
  for (;;) {
    const engines = await port.listEngines();
    if (engines.length === 0) {
      log.info({ deleted: asked.size }, 'Deleted every engine');
      return asked.size;
    }
    for (const engine of engines.filter((e) => !e.deleting && !asked.has(keyOf(e)))) {
      await port.deleteEngine(engine);
      asked.add(keyOf(engine));
      log.info({ engine: engine.name, kind: engine.plural }, 'Deleted engine');
    }
    if (clock.now() >= deadline) {
      throw new UninstallIncomplete(
        `Cannot finish uninstalling: ${engines.length} engine(s) of namespace "${options.namespace}" still exist ` +
          `after ${Math.round(options.timeoutMs / 1000)} s: ${describe(engines)}. The operator deletes an engine's ` +
          `pods and data volumes before it lets the engine go: check that it runs (kubectl -n ${options.namespace} ` +
          `get pods -l ${options.operatorSelector}) and why it has not (its log), then run helm uninstall again`,
      );
    }
    log.info({ remaining: engines.length }, 'Waiting for the operator to delete engines');
    await clock.sleep(options.intervalMs);
  }
}

/**
 * Waits until the operator's pods are gone (a running operator would put its finalizer back),
 * then takes the finalizer off every engine. Resolves to the number released.
 */
export async function releaseEngines(port: UninstallPort, options: UninstallOptions): Promise<number> {
  const { clock, log } = options;
  const deadline = clock.now() + options.timeoutMs;
  for (let pods = await port.operatorPods(); pods.length > 0; pods = await port.operatorPods()) {
    if (clock.now() >= deadline) {
      throw new UninstallIncomplete(
        `Cannot release the engines of namespace "${options.namespace}": the operator's pods (${pods.join(', ')}) ` +
          `still exist after ${Math.round(options.timeoutMs / 1000)} s, and a running operator puts its finalizer ` +
          `back. Check why they do not stop (kubectl -n ${options.namespace} get pods -l ${options.operatorSelector}), ` +
          `then run helm uninstall again`,
      );
    }
    log.info({ pods: pods.length }, 'Waiting for the operator to stop');
    await clock.sleep(options.intervalMs);
  }
  const released = new Set<string>();
  for (let round = 0; ; round++) {
    // An engine changed under a release is released again in the next round, a moment later.
    if (round > 0) await clock.sleep(options.intervalMs);
    const held = (await port.listEngines()).filter((e) => e.finalizers.includes(FINALIZER));
    if (held.length === 0) {
      log.info({ released: released.size }, 'Released every engine');
      return released.size;
    }
    if (clock.now() >= deadline) {
      throw new UninstallIncomplete(
        `Cannot release the engines of namespace "${options.namespace}": ${held.length} engine(s) still carry the ` +
          `finalizer ${FINALIZER} after ${Math.round(options.timeoutMs / 1000)} s: ${describe(held)}. ` +
          `Run helm uninstall again`,
      );
    }
    for (const engine of held) {
      await port.releaseEngine(engine);
      released.add(keyOf(engine));
      log.info({ engine: engine.name, kind: engine.plural }, 'Released engine');
    }
  }
}

const keyOf = (engine: EngineRef): string => `${engine.plural}/${engine.name}`;
