/**
 * The running-engine caps of a profile: how many engines, and how much cpu, gpu and memory, one
 * user may have running under it. The count is a pure decision; taking it under a lock is the
 * side effect at the edge.
 */
import { ApiError } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import { hasCaps, quotaProblem } from '../engines/settings.ts';
import type { Intent } from '../store/objects.ts';
import type { Locks } from '../store/store-interface.ts';
import type { EngineMessage, EngineProfile } from './engine-service.ts';
import { engineWorkspace } from './engine-permissions.ts';
import type { EngineRecords, StoredEngine } from './engine-records.ts';
import type { MessageKind } from './message-kinds.ts';

/** States in which an engine counts against its user's running caps. */
const STOPPED_STATES = [
  'STATE_PAUSED',
  'STATE_FAILED',
  'STATE_DELETING',
  'STATE_TERMINATED',
  'STATE_TERMINATING',
];

/** Whether an engine in state `stateName` with `intent` counts as running against its user's caps. */
export function isRunning(intent: Intent, stopIntent: 'paused' | 'terminated', stateName: string): boolean {
  return !intent[stopIntent] && !STOPPED_STATES.includes(stateName);
}

/**
 * Why starting `engine` would overrun its profile's caps, given the engines of its workspace
 * (`running` tells which of them run); undefined when there is room. Only the other running
 * engines of the same user and profile count.
 */
export function quotaExceeded<E extends EngineMessage>(
  engines: readonly StoredEngine<E>[],
  running: (stored: StoredEngine<E>) => boolean,
  engine: E,
  profile: EngineProfile,
): ApiError | undefined {
  const others = engines
    .filter((s) => s.engine.name !== engine.name && s.engine.creator === engine.creator)
    .filter((s) => s.engine.profile === engine.profile && running(s))
    .map((s) => s.engine);
  const problem = quotaProblem(others, engine, profile);
  if (!problem) return undefined;
  return new ApiError(Code.RESOURCE_EXHAUSTED, `Cannot start the engine: ${problem}`, {
    reason: 'QUOTA_EXCEEDED',
  });
}

/** The running-engine caps of one engine kind's profiles. */
export class RunningQuota<E extends EngineMessage, P extends EngineProfile> {
  private readonly locks: Locks;
  private readonly kind: MessageKind<E>;
  private readonly stopIntent: 'paused' | 'terminated';
  private readonly records: EngineRecords<E>;

  constructor(
    locks: Locks,
    kind: MessageKind<E>,
    stopIntent: 'paused' | 'terminated',
    records: EngineRecords<E>,
  ) {
    this.locks = locks;
    this.kind = kind;
    this.stopIntent = stopIntent;
    this.records = records;
  }

  /** Whether an engine counts as running against its user's caps. */
  isRunning(stored: { engine: E; intent: Intent }): boolean {
    return isRunning(stored.intent, this.stopIntent, this.records.stateName(stored.engine));
  }

  /**
   * Runs `write` (which starts `engine`) only if the user's running engines of the same profile
   * leave room under the profile's caps. Checks and writes of one user and profile run one at a
   * time across every gateway replica (a Lease per user and profile, store/lease-lock.ts), each
   * counting on data that includes the previous holder's write, so concurrent creates and
   * resumes cannot overrun the caps together, wherever they arrive.
   */
  async withinQuota(engine: E, profile: P, write: () => Promise<StoredEngine<E>>): Promise<StoredEngine<E>> {
    // Without caps there is nothing to count, nor to serialise: creates run side by side.
    if (!hasCaps(profile)) return write();
    const workspace = engineWorkspace(this.kind, engine.name);
    const key = `${workspace}/${engine.creator}/${profile.name}`;
    return this.locks.run(key, async (held) => {
      // The previous holder may be another replica: count on data that has its write.
      const engines = await this.records.allHeld(workspace, held);
      const exceeded = quotaExceeded(engines, (s) => this.isRunning(s), engine, profile);
      if (exceeded) throw exceeded;
      const saved = await write();
      return { result: saved, wrote: saved.resourceVersion };
    });
  }
}
