/**
 * An engine's logs as one text download: every container of every pod of the engine, pods in
 * ordinal order (H2O node 0 first), each container under a header line:
 *
 *   ===== pod "h2o-…-0", container "h2o" =====
 *   <the container's log>
 *
 * A container whose log cannot be read contributes a line saying why, so one stuck pod does not
 * hide the others' logs. An engine without pods (paused, terminated, not started yet) has no
 * logs to give: the text is empty, a successful download of nothing rather than an error, so
 * clients that save or scan the text need no special case.
 *
 * Size: the download is for people and support tickets, and the gateway holds it in memory, so
 * each container gives at most its newest {@link MAX_TAIL_LINES} lines and the whole download at
 * most {@link TOTAL_LOG_BYTES} (shared equally between containers, at most
 * {@link MAX_CONTAINER_BYTES} each): under gRPC's default 4 MiB message limit, so clients need
 * no setting to receive it.
 */
import type { ContainerLog, EnginePod, LogLimits, PodLogSource } from '../store/pod-logs.ts';

export const MAX_TAIL_LINES = 10_000;
export const TOTAL_LOG_BYTES = 3 * 1024 * 1024;
export const MAX_CONTAINER_BYTES = 1024 * 1024;
/** Reads in flight at once: a large H2O cluster must not fan out hundreds of kubelet calls. */
const PARALLEL_READS = 4;

/** Each container's share of the download. */
export function containerLimits(containers: number): LogLimits {
  const share = Math.floor(TOTAL_LOG_BYTES / Math.max(containers, 1));
  return { tailLines: MAX_TAIL_LINES, limitBytes: Math.max(1, Math.min(MAX_CONTAINER_BYTES, share)) };
}

/** The ordinal of a StatefulSet pod (`<set>-<ordinal>`); pods without one sort last. */
function ordinal(pod: string): number {
  const match = /-(\d+)$/.exec(pod);
  return match ? Number(match[1]) : Number.MAX_SAFE_INTEGER;
}

/** Pods in ordinal order (numeric, so node 10 follows node 9), then by name. */
export function inOrdinalOrder(pods: readonly EnginePod[]): EnginePod[] {
  return [...pods].sort((a, b) => ordinal(a.name) - ordinal(b.name) || a.name.localeCompare(b.name));
}

/** One container's section: its header, its log (ending in a newline), and any cut it suffered. */
function section(log: ContainerLog, limits: LogLimits): string {
  const header = `===== pod "${log.pod}", container "${log.container}" =====\n`;
  if ('error' in log) return `${header}(log unavailable: ${log.error})\n`;
  const text = log.text === '' || log.text.endsWith('\n') ? log.text : `${log.text}\n`;
  const lines = text.split('\n').length - 1;
  const cut = Buffer.byteLength(log.text) >= limits.limitBytes || lines >= limits.tailLines;
  const note = cut
    ? `(log truncated: each container's newest ${limits.tailLines} lines, at most ${limits.limitBytes} bytes of them, are downloaded)\n`
    : '';
  return `${header}${text}${note}`;
}

/** The download's text from the containers' logs, in the order given. */
export function logsText(logs: readonly ContainerLog[], limits: LogLimits): string {
  return logs.map((log) => section(log, limits)).join('\n');
}

/** Runs `task` over `items` with at most `parallel` in flight; results keep the items' order. */
async function mapBounded<T, R>(
  items: readonly T[],
  parallel: number,
  task: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, items.length) }, worker));
  return results;
}

/** The text download of the logs of the engine with this uid (see the module comment). */
export async function engineLogs(source: PodLogSource, engineUid: string): Promise<string> {
  const pods = inOrdinalOrder(await source.podsOf(engineUid));
  const containers = pods.flatMap((pod) => pod.containers.map((container) => ({ pod: pod.name, container })));
  const limits = containerLimits(containers.length);
  const logs = await mapBounded(containers, PARALLEL_READS, ({ pod, container }) =>
    source.read(pod, container, limits),
  );
  return logsText(logs, limits);
}
