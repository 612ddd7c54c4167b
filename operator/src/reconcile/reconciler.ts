/**
 * Reconciles one engine from its key and the current state of the cluster — never from the event
 * that queued it — so the operator may be killed at any step and pick up where the cluster is.
 * It reads the ClusterView (memory) and writes only what differs from what is there:
 *
 * 1. read the engine; if it is being deleted, clean up (finalizer) and stop;
 * 2. compute the desired objects (pure) and write what differs from what is there: create what is
 *    missing, patch the parts that changed (desired/digest.ts);
 * 3. grow data volumes that are smaller than wanted;
 * 4. observe the pods; replace failed pods after a resume;
 * 5. stop the engine when a duration limit is exceeded (by writing its intent, as a user would);
 *    at the idle limit, first ask the engine whether it worked without traffic (its kind's
 *    activity probe), and record the activity it shows instead of stopping it;
 * 6. write the status through the status subresource, only the fields that changed.
 */
import type { KubernetesObject, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import {
  ENGINE_FINALIZER,
  ID_LABEL,
  LAST_ACTIVITY_ANNOTATION,
  STOP_REASON_ANNOTATION,
  WORKSPACE_LABEL,
} from '../../../shared/resources.ts';
import {
  clientServiceName,
  dataClaimName,
  DATA_VOLUME,
  desiredObjects,
  sizingOf,
  stopWanted,
  workloadName,
  type DesiredObjects,
} from '../desired/workload.ts';
import { timeOf } from '../../../shared/durations.ts';
import { failure } from '../observe/state.ts';
import {
  decimalText,
  sharedStatus,
  type EngineKind,
  type EngineKindName,
  type EngineResource,
  type Settings,
} from '../kinds/kind.ts';
import type { EngineWrites } from '../kube/client.ts';
import { statusCode } from '../../../shared/watched-collection.ts';
import type { EngineReads, OwnedObjects } from '../kube/cluster-view.ts';
import { ownedWrite } from '../desired/digest.ts';
import type { ReconcileResult } from '../runtime/controller.ts';
import { ADMITTED, mergeConditions, REASONS, type Condition } from './conditions.ts';
import { changedFields, planStatus, type StatusInput, type StatusPlan } from './status.ts';
import { MalformedAnswer, recentActivity } from '../activity/activity-probe.ts';
import type { ActivityProber, EngineAsker } from '../activity/prober.ts';
import { parseStorageQuantity } from '../../../shared/quantity.ts';
import type { Queueing } from '../queueing/queueing.ts';
import {
  apiQueueName,
  engineQueue,
  gpuResourcesOf,
  QUEUE_LABEL,
  queueLabels,
  queueLabelsOf,
  queuedStatefulSet,
  type EngineQueue,
} from '../queueing/kueue-objects.ts';
import { planQueueStatus, type QueuePlan } from '../queueing/queue-status.ts';
import type { EngineQueueStatus } from '../gen/resources.ts';

/** The API writes it with the engine; an engine written without it (the admin's kubectl) gets it here. */
export const FINALIZER = ENGINE_FINALIZER;
/** While deleting, look again this soon if no event arrives first. */
const CLEANUP_RECHECK_MS = 2000;
/** While an engine awaits its snapshots, look again this soon if no event arrives first. */
const SNAPSHOT_RECHECK_MS = 1000;
/** While a volume grows, look again this soon (a resize may take hours; it never times out). */
const RESIZE_RECHECK_MS = 5000;

export interface ReconcilerDeps<K extends EngineKindName = EngineKindName> {
  /** The writes: the KubeClient, or a cluster kept in memory in tests. */
  kube: EngineWrites;
  /** The reads: the ClusterView, or a cluster kept in memory in tests. */
  view: EngineReads;
  kind: EngineKind<K>;
  settings: Settings;
  now?: () => Date;
  /**
   * Asks an engine whose kind has an activity probe, at its idle limit, when it was last active;
   * without one, engines idle by their activity annotations alone.
   */
  probeActivity?: ActivityProber;
  /** Asks a ready engine whether it serves as a whole (the kind's serving check); never when unset. */
  askEngine?: EngineAsker;
  /** GPU queueing, when the installation turned it on (queueing/). */
  queueing?: Queueing;
}

const uidOf = (engine: EngineResource): string => engine.metadata.uid ?? '';
const live = (object: KubernetesObject): boolean => object.metadata?.deletionTimestamp === undefined;

/** Whether the copy holds the object and it is not being deleted. */
function present(object: KubernetesObject | undefined): boolean {
  return object !== undefined && live(object);
}

export class EngineReconciler<K extends EngineKindName = EngineKindName> {
  private readonly deps: ReconcilerDeps<K>;

  constructor(deps: ReconcilerDeps<K>) {
    this.deps = deps;
  }

  private now(): Date {
    return this.deps.now?.() ?? new Date();
  }

  async reconcile(key: string): Promise<ReconcileResult | undefined> {
    const { view, kind } = this.deps;
    const read = view.engine(kind, key);
    if (read === undefined) return undefined;
    if (read.metadata.deletionTimestamp !== undefined) return this.finalize(read);
    // The API records the profile and version snapshots with the object; when they were too
    // large for that, it writes them to status in a second step, and until that lands there is
    // nothing to run. Its write wakes us.
    if (!hasSnapshots(this.deps.kind, read)) {
      if (!admitted(read)) return this.holdUnadmitted(read);
      return { requeueAfterMs: SNAPSHOT_RECHECK_MS };
    }
    const engine = await this.ensureFinalizer(read);
    const problem = await this.applyDesired(engine, this.queueOf(engine));
    if (problem) return this.report(engine, [], { storageResizing: false, terminal: problem });
    const claims = view.claims.of(uidOf(engine));
    const storageResizing = await this.growClaims(engine, claims);
    const pods = view.pods.of(uidOf(engine));
    await this.replaceFailedPodsAfterResume(engine, pods);
    const result = await this.report(engine, pods, { storageResizing, claims });
    if (!storageResizing) return result;
    return { requeueAfterMs: Math.min(result?.requeueAfterMs ?? RESIZE_RECHECK_MS, RESIZE_RECHECK_MS) };
  }

  /**
   * An engine written to Kubernetes while the gateway did not admit it (its webhooks not
   * registered): nothing checked it, so nothing of it runs. It says so in a condition until a
   * change that the gateway admits makes it an engine; that change wakes us.
   */
  private async holdUnadmitted(engine: EngineResource<K>): Promise<undefined> {
    const { kind, kube, view } = this.deps;
    const previous = sharedStatus(engine).conditions ?? [];
    const conditions = mergeConditions(previous, [notAdmittedCondition(engine)], this.now());
    const changed = changedFields(engine.storedStatus ?? engine.status, { conditions });
    if (Object.keys(changed).length > 0)
      view.wroteEngine(kind, await kube.patchEngineStatus(kind, engine.metadata.name, changed), true);
    return undefined;
  }

  /**
   * Computes and applies what should exist; a problem only a change of the engine or its profile
   * can mend comes back instead of being thrown, so that it is reported and not retried.
   */
  private async applyDesired(
    engine: EngineResource<K>,
    queue: EngineQueue | undefined,
  ): Promise<{ reason: string; message: string } | undefined> {
    let desired: DesiredObjects;
    try {
      desired = desiredObjects(this.deps.kind, engine, this.deps.settings);
    } catch (error: unknown) {
      // The desired state is a pure function of the engine: a retry would fail the same way.
      const message = error instanceof Error ? error.message : String(error);
      return { reason: REASONS.invalidPodTemplate, message };
    }
    try {
      await this.apply(engine, desired, queue);
      return undefined;
    } catch (error: unknown) {
      // The apiserver refuses the workload itself (e.g. the profile's pod template added a
      // container without an image).
      if (statusCode(error) !== 422) throw error;
      return {
        reason: REASONS.invalidWorkload,
        message: `Kubernetes refused the engine's workload: ${refusal(error)}`,
      };
    }
  }

  /** The engine with the operator's finalizer, added if it lacked it. */
  private async ensureFinalizer(engine: EngineResource<K>): Promise<EngineResource<K>> {
    const finalizers = engine.metadata.finalizers ?? [];
    if (finalizers.includes(FINALIZER)) return engine;
    return this.patchEngine(engine, {
      metadata: { finalizers: [...finalizers, FINALIZER], resourceVersion: engine.metadata.resourceVersion },
    });
  }

  /** A merge patch of the engine, noted in the view; the engine as reconciles read it. */
  private async patchEngine(engine: EngineResource<K>, body: object): Promise<EngineResource<K>> {
    const { kind, kube, view } = this.deps;
    return view.wroteEngine(kind, await kube.patchEngine(kind, engine.metadata.name, body));
  }

  /**
   * Where the engine waits before it runs, when queueing is on and the engine is one that queues
   * (queueing/kueue-objects.ts); none otherwise.
   */
  private queueOf(engine: EngineResource<K>): EngineQueue | undefined {
    const { kind, queueing } = this.deps;
    if (queueing === undefined || kind.queuePriority === undefined) return undefined;
    const sizing = sizingOf(kind, engine);
    return engineQueue(queueing.config, {
      workspace: engine.metadata.labels?.[WORKSPACE_LABEL],
      gpus: sizing.gpu,
      priority: kind.queuePriority(engine),
      gpuResources: gpuResourcesOf(sizing.resources.requests),
    });
  }

  /**
   * The queue labels of the engine's StatefulSet: those it was created with, which it keeps for
   * its life (Kueue refuses a change of queue while the set runs), or, for a set to create, its
   * queue's.
   */
  private queueLabelsFor(engine: EngineResource<K>, queue: EngineQueue | undefined): Record<string, string> {
    const existing = this.deps.view.statefulSets.get(workloadName(this.deps.kind, engine));
    if (present(existing)) return queueLabelsOf(existing);
    return queue === undefined ? {} : queueLabels(queue);
  }

  /** Writes each desired object that differs from what is there (desired/digest.ts). */
  private async apply(
    engine: EngineResource<K>,
    desired: DesiredObjects,
    queue: EngineQueue | undefined,
  ): Promise<void> {
    const { view } = this.deps;
    const name = workloadName(this.deps.kind, engine);
    const stopped = desired.statefulSet.spec?.replicas === 0;
    // An engine stopped before it ever ran has nothing to keep: its workload is written when it
    // first starts, not for every engine created (or held) paused.
    if (stopped && !present(view.statefulSets.get(name))) return;
    const labels = this.queueLabelsFor(engine, queue);
    if (stopped && (labels[QUEUE_LABEL] !== undefined || queue !== undefined))
      return this.stopQueued(engine, desired, labels);
    if (labels[QUEUE_LABEL] !== undefined && queue !== undefined) await this.deps.queueing?.ensure(queue);
    await this.applyOwned(engine, desired, queuedStatefulSet(desired.statefulSet, labels));
  }

  /**
   * Stops an engine whose StatefulSet is in a queue, or is to be: a queued engine stops by losing
   * its StatefulSet, its volume kept (scaled to zero, Kueue 0.17 may leave the set's Workload
   * holding the quota). A set made before queueing was on goes the same way, so that the next
   * start makes it anew in its queue — sets join queues only when made, as Kueue's scale-from-zero
   * path is the one its known bugs live on. It is scaled down first and goes once its pods have,
   * orphaning its claims: they outlive it whatever its retention policy says.
   */
  private async stopQueued(
    engine: EngineResource<K>,
    desired: DesiredObjects,
    labels: Record<string, string>,
  ): Promise<void> {
    const name = workloadName(this.deps.kind, engine);
    if (labels[QUEUE_LABEL] !== undefined) return this.deps.kube.deleteStatefulSet(name);
    if (this.deps.view.pods.of(uidOf(engine)).some(live))
      return this.applyOwned(engine, desired, desired.statefulSet);
    return this.deps.kube.deleteStatefulSet(name, 'orphan');
  }

  /** Writes each desired object that differs from what is there, with the StatefulSet as `statefulSet`. */
  private async applyOwned(
    engine: EngineResource<K>,
    desired: DesiredObjects,
    statefulSet: DesiredObjects['statefulSet'],
  ): Promise<void> {
    const { view } = this.deps;
    const name = workloadName(this.deps.kind, engine);
    if (desired.configMap) await this.applyChanged(view.configMaps, name, desired.configMap);
    // The policy comes before the pods, so that no pod of the engine is ever reachable unguarded.
    if (desired.networkPolicy) await this.applyChanged(view.networkPolicies, name, desired.networkPolicy);
    // Policies turned off: the engine's earlier policy would go on enforcing the old peers.
    else if (present(view.networkPolicies.get(name))) await this.deps.kube.deleteNetworkPolicy(name);
    await this.applyChanged(view.services, name, desired.service);
    if (desired.clientService)
      await this.applyChanged(
        view.services,
        clientServiceName(this.deps.kind, engine),
        desired.clientService,
      );
    await this.applyChanged(view.statefulSets, name, statefulSet, (wanted, existing) => {
      // Volume claim templates cannot change once the StatefulSet exists (growth goes to the
      // claims themselves), so an existing set keeps the templates it has.
      const templates = existing?.spec?.volumeClaimTemplates;
      if (templates === undefined || wanted.spec === undefined) return wanted;
      const volumeClaimTemplates = templates.map(claimTemplateOf);
      return Object.assign({}, wanted, { spec: Object.assign({}, wanted.spec, { volumeClaimTemplates }) });
    });
  }

  /**
   * Writes what `wanted` (as `sent` makes it from what exists) asks of the object of that name in
   * `copy`: a create when it is missing, a patch of what changed otherwise, nothing when nothing
   * did (desired/digest.ts); notes the answer in the copy.
   */
  private async applyChanged<T extends KubernetesObject>(
    copy: OwnedObjects<T>,
    name: string,
    wanted: T,
    sent?: (wanted: T, existing: T | undefined) => T,
  ): Promise<void> {
    const existing = copy.get(name);
    const write = ownedWrite(wanted, existing, sent?.(wanted, existing) ?? wanted);
    if (write === undefined) return;
    const { kube } = this.deps;
    copy.wrote(
      await ('create' in write ? kube.create(write.create) : kube.patchOwned<T>(write.patch, write.replace)),
    );
  }

  /** Asks for more storage where the engine wants it; true while its bound volume is smaller than wanted. */
  private async growClaims(
    engine: EngineResource<K>,
    claims: readonly V1PersistentVolumeClaim[],
  ): Promise<boolean> {
    const { kind, kube, view } = this.deps;
    if (kind.dataMountPath === undefined) return false;
    const wanted = wantedStorage(kind, engine);
    const claim = claims.find((c) => c.metadata?.name === dataClaimName(kind, engine, 0));
    const name = claim?.metadata?.name;
    // A claim not bound yet is being provisioned, not resized; only a bound claim can grow.
    if (claim === undefined || name === undefined || claim.status?.phase !== 'Bound') return false;
    if (requested(claim) < wanted) view.claims.wrote(await kube.growClaim(name, wanted));
    return capacity(claim) < wanted;
  }

  /** A resume replaces the pods that were failing before it, so the engine starts afresh. */
  private async replaceFailedPodsAfterResume(
    engine: EngineResource<K>,
    pods: readonly V1Pod[],
  ): Promise<void> {
    const resumed = timeOf(sharedStatus(engine).resumeTime);
    if (resumed === undefined) return;
    const now = this.now();
    const stale = pods.filter(
      (pod) =>
        live(pod) &&
        (timeOf(pod.metadata?.creationTimestamp) ?? resumed) < resumed &&
        failure(pod, now) !== undefined,
    );
    for (const pod of stale) await this.deps.kube.deletePod(pod.metadata?.name ?? '');
  }

  private async report(
    read: EngineResource<K>,
    pods: readonly V1Pod[],
    extra: {
      storageResizing: boolean;
      claims?: readonly V1PersistentVolumeClaim[];
      terminal?: { reason: string; message: string };
    },
  ): Promise<ReconcileResult | undefined> {
    const { kind, kube, view } = this.deps;
    const queue = this.queuePlan(read);
    if (queue.preempted === true) return this.preempt(read, queue.status);
    const input = await this.servingChecked({
      kind,
      engine: read,
      pods,
      now: this.now(),
      settings: this.deps.settings,
      queueStatus: queue.status,
      ...extra,
    });
    const { plan, engine } = await this.probedPlan(input, planStatus(input));
    if (plan.autoStop !== undefined) {
      // Stop as a user would: record the intent; the next reconcile moves the state.
      await this.patchEngine(engine, {
        metadata: {
          resourceVersion: engine.metadata.resourceVersion,
          annotations: { [STOP_REASON_ANNOTATION]: exceededReason(plan.autoStop) },
        },
        spec: { [kind.stopIntent]: true },
      });
      return undefined;
    }
    if (!stopWanted(kind, engine) && engine.metadata.annotations?.[STOP_REASON_ANNOTATION] !== undefined) {
      await this.patchEngine(engine, { metadata: { annotations: { [STOP_REASON_ANNOTATION]: null } } });
    }
    const changed = changedFields(engine.storedStatus ?? engine.status, plan.status);
    if (Object.keys(changed).length > 0)
      view.wroteEngine(kind, await kube.patchEngineStatus(kind, engine.metadata.name, changed), true);
    return plan.requeueAfterMs === undefined ? undefined : { requeueAfterMs: plan.requeueAfterMs };
  }

  /**
   * Where the engine stands in its queue, when its StatefulSet is queued: from the set's Workload,
   * and its place in the queue while it waits. Nothing (what was reported stays) otherwise.
   */
  private queuePlan(engine: EngineResource<K>): QueuePlan {
    const { kind, queueing } = this.deps;
    // An engine being deleted reports DELETING; where it stood in its queue no longer matters.
    if (engine.metadata.deletionTimestamp !== undefined) return {};
    const set = this.queuedSet(engine);
    const workspace = engine.metadata.labels?.[WORKSPACE_LABEL];
    if (queueing === undefined || set === undefined || workspace === undefined) return {};
    const { localQueue, uid } = set;
    const workload = uid === undefined ? undefined : queueing.workloadOf(uid);
    const observation = {
      queue: apiQueueName(workspace),
      stopWanted: stopWanted(kind, engine),
      workload,
      position: undefined,
      previous: queueStatusOf(engine),
      now: this.now(),
    };
    const plan = planQueueStatus(observation);
    if (workload === undefined) return plan;
    if (plan.waiting !== true) {
      queueing.forget(localQueue, workload.name);
      return plan;
    }
    return planQueueStatus({ ...observation, position: queueing.positionOf(localQueue, workload.name) });
  }

  /** The engine's StatefulSet, when there is one in a queue: its LocalQueue and uid. */
  private queuedSet(engine: EngineResource<K>): { localQueue: string; uid: string | undefined } | undefined {
    const set = this.deps.view.statefulSets.get(workloadName(this.deps.kind, engine));
    const localQueue = set?.metadata?.labels?.[QUEUE_LABEL];
    if (!present(set) || localQueue === undefined) return undefined;
    return { localQueue, uid: set?.metadata?.uid };
  }

  /**
   * Stops an engine the queue preempted, as a user would pause it (H2O engines: terminate), with
   * the queue's words in its queue status first, so that it never reads stopped without them.
   */
  private async preempt(
    engine: EngineResource<K>,
    status: EngineQueueStatus | undefined,
  ): Promise<undefined> {
    const { kind, kube, view } = this.deps;
    let current = engine;
    const changed = changedFields(engine.storedStatus ?? engine.status, {
      queueStatus: { position: null, ...status },
    });
    if (Object.keys(changed).length > 0)
      current = view.wroteEngine(
        kind,
        await kube.patchEngineStatus(kind, engine.metadata.name, changed),
        true,
      );
    await this.patchEngine(current, {
      metadata: {
        resourceVersion: current.metadata.resourceVersion,
        annotations: { [STOP_REASON_ANNOTATION]: REASONS.preempted },
      },
      spec: { [kind.stopIntent]: true },
    });
    return undefined;
  }

  /**
   * The input, once an engine whose pods say it is ready to be RUNNING for the first time in this
   * run has been asked whether it serves as a whole (its kind's serving check): an answer that
   * says not yet keeps it CONNECTING and asks again shortly, and so does a refusal (an HTTP error
   * status: the ready pod runs the engine, which says no — an H2O node that is not the cloud's
   * leader refuses, and kubelet may still count it ready for a probe period after the nodes
   * merged). An engine that does not answer at all (a simulated pod's address), or answers what
   * it should not, is judged by its pods' readiness alone, as without the check.
   */
  private async servingChecked(input: StatusInput<K>): Promise<StatusInput<K>> {
    const { kind, askEngine } = this.deps;
    const check = kind.servingCheck;
    if (check === undefined || askEngine === undefined) return input;
    if (sharedStatus(input.engine).state === 'STATE_RUNNING') return input;
    if (planStatus(input).status['state'] !== 'STATE_RUNNING') return input;
    const { engine, pods, settings } = input;
    const outcome = await askEngine({ kind, engine, pods, settings, paths: [check.path] });
    if ('failure' in outcome)
      return outcome.refusedWith === undefined ? input : { ...input, notServingYet: true };
    try {
      return check.serves(outcome.answers[0], engine) ? input : { ...input, notServingYet: true };
    } catch (error: unknown) {
      if (error instanceof MalformedAnswer) return input;
      throw error;
    }
  }

  /**
   * The plan, once the engine has been asked whether it was active when the idle limit asks to
   * stop it: activity it shows within the limit is recorded as its latest (the annotation the
   * access proxy writes), with the resourceVersion the decision was made on, and the plan is made
   * again from it — the next deadline is then a full limit after that activity. A probe that
   * fails (the engine does not answer, or not as it should) leaves the plan as it was: the engine
   * is stopped as idle.
   */
  private async probedPlan(
    input: StatusInput<K>,
    plan: StatusPlan,
  ): Promise<{ plan: StatusPlan; engine: EngineResource<K> }> {
    const { kind, probeActivity } = this.deps;
    const probe = kind.activityProbe;
    const { engine, pods, settings, now } = input;
    if (plan.autoStop !== 'maxIdleDuration' || plan.idle === undefined) return { plan, engine };
    if (probe === undefined || probeActivity === undefined) return { plan, engine };
    const outcome = await probeActivity({ kind, probe, engine, pods, settings, now });
    const found = 'found' in outcome ? recentActivity(outcome.found, { ...plan.idle, now }) : undefined;
    if (found === undefined) return { plan, engine };
    const recorded = await this.patchEngine(engine, {
      metadata: {
        resourceVersion: engine.metadata.resourceVersion,
        annotations: { [LAST_ACTIVITY_ANNOTATION]: found.toISOString() },
      },
    });
    return { plan: planStatus({ ...input, engine: recorded }), engine: recorded };
  }

  /** Deletes the engine's StatefulSet (its pods go with it), Services, ConfigMap and NetworkPolicy, where present. */
  private async deleteWorkloads(engine: EngineResource<K>): Promise<void> {
    const { kind, kube, view } = this.deps;
    const name = workloadName(kind, engine);
    if (present(view.statefulSets.get(name))) await kube.deleteStatefulSet(name);
    for (const service of [name, clientServiceName(kind, engine)])
      if (present(view.services.get(service))) await kube.deleteService(service);
    if (present(view.configMaps.get(name))) await kube.deleteConfigMap(name);
    if (present(view.networkPolicies.get(name))) await kube.deleteNetworkPolicy(name);
  }

  /** Deletion: remove the workloads and volumes, report DELETING, then let the resource go. */
  private async finalize(engine: EngineResource<K>): Promise<ReconcileResult | undefined> {
    const { kube, view } = this.deps;
    if (!(engine.metadata.finalizers ?? []).includes(FINALIZER)) return undefined;
    await this.deleteWorkloads(engine);
    const claims = view.claims.of(uidOf(engine));
    for (const claim of claims.filter(live)) await kube.deleteClaim(claim.metadata?.name ?? '');
    const pods = view.pods.of(uidOf(engine));
    if (pods.length > 0 || claims.length > 0) {
      await this.report(engine, pods, { storageResizing: false });
      return { requeueAfterMs: CLEANUP_RECHECK_MS };
    }
    await this.patchEngine(engine, {
      metadata: {
        finalizers: (engine.metadata.finalizers ?? []).filter((f) => f !== FINALIZER),
        resourceVersion: engine.metadata.resourceVersion,
      },
    });
    return undefined;
  }
}

/** An existing claim template as an apply sends it back unchanged. */
function claimTemplateOf(template: V1PersistentVolumeClaim): V1PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: template.metadata?.name ?? DATA_VOLUME,
      ...(template.metadata?.labels ? { labels: template.metadata.labels } : {}),
      ...(template.metadata?.annotations ? { annotations: template.metadata.annotations } : {}),
    },
    spec: template.spec ?? {},
  };
}

/** The bytes the engine wants its data volume to hold; 0 when unset. */
function wantedStorage(kind: EngineKind, engine: EngineResource): bigint {
  return BigInt(decimalText(kind.storageBytes?.(engine)) ?? '0');
}

/** Bytes of a storage quantity; 0 when absent (a claim not yet bound has no capacity). */
function quantityBytes(quantity: string | undefined): bigint {
  return quantity === undefined ? 0n : parseStorageQuantity(quantity);
}

const requested = (claim: V1PersistentVolumeClaim): bigint =>
  quantityBytes(claim.spec?.resources?.requests?.['storage']);
const capacity = (claim: V1PersistentVolumeClaim): bigint =>
  quantityBytes(claim.status?.capacity?.['storage']);

/** The apiserver's own message of a refused request. */
function refusal(error: unknown): string {
  const body = typeof error === 'object' && error !== null && 'body' in error ? error.body : undefined;
  try {
    const status = JSON.parse(String(body)) as { message?: string };
    return status.message ?? String(body);
  } catch {
    return String(body);
  }
}

/** What the engine reports of its queue; kinds that never queue have no such field. */
function queueStatusOf(engine: EngineResource): EngineQueueStatus | undefined {
  const status = engine.status;
  return status !== undefined && 'queueStatus' in status ? status.queueStatus : undefined;
}

/** Whether the API wrote the engine (or admitted it): only then does it carry its identity labels. */
function admitted(engine: EngineResource): boolean {
  const labels = engine.metadata.labels ?? {};
  return labels[WORKSPACE_LABEL] !== undefined && labels[ID_LABEL] !== undefined;
}

function notAdmittedCondition(engine: EngineResource): Omit<Condition, 'lastTransitionTime'> {
  return {
    type: ADMITTED,
    status: 'False',
    reason: REASONS.notAdmitted,
    message:
      'AI Engine Manager did not admit this engine (its admission webhooks were not registered when it ' +
      'was written), so it is held and nothing of it runs. Apply it again once the gateway serves its ' +
      'webhooks: it is then checked and completed like an engine created through the API.',
    observedGeneration: engine.metadata.generation ?? 0,
  };
}

/** Whether the API has written the engine's profile and version (or image) snapshots. */
export function hasSnapshots(kind: EngineKind, engine: EngineResource): boolean {
  const { profile, version } = kind.snapshots(engine);
  return [profile, version].every((snapshot) => snapshot !== undefined && Object.keys(snapshot).length > 0);
}

function exceededReason(limit: 'maxIdleDuration' | 'maxRunningDuration'): string {
  return limit === 'maxIdleDuration' ? 'MaxIdleDurationExceeded' : 'MaxRunningDurationExceeded';
}
