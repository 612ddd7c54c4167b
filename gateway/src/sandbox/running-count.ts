/**
 * A sandbox engine's count of running processes, kept on the engine (annotation
 * `engine.h2o.ai/running-processes`, with the time of the change as its last activity): a
 * sandbox with a running process is never idle, and its idle time counts from the last one's
 * end. Recounted from the processes themselves, so every replica writes the same truth.
 */
import {
  LAST_ACTIVITY_ANNOTATION,
  RESOURCE_KINDS,
  RUNNING_PROCESSES_ANNOTATION,
} from '../../../shared/resources.ts';
import { Process_State } from '../gen/ai/h2o/engine/v1/process.pb.ts';
import type { Store } from '../store/store-interface.ts';
import { engineName, parseProcessName, type ProcessStore } from './process-store.ts';

/** Recounts the running processes of the engine `processName` belongs to. */
export async function recountRunning(
  deps: { processes: ProcessStore; store: Store },
  processName: string,
  now: Date,
): Promise<void> {
  const parts = parseProcessName(processName);
  if (parts === undefined) return;
  const running = (await deps.processes.list(parts.workspace, parts.engine)).filter(
    (p) => p.state === Process_State.STATE_RUNNING,
  ).length;
  await deps.store.annotate(RESOURCE_KINDS.SandboxEngine, engineName(parts), {
    [RUNNING_PROCESSES_ANNOTATION]: String(running),
    [LAST_ACTIVITY_ANNOTATION]: now.toISOString(),
  });
}
