/**
 * The decisions of sandbox metrics, kept free of I/O: parsing what the metrics API and `df`
 * report, and turning one sample into the API's Metrics with what is missing named.
 */
import type { Metrics } from '../gen/ai/h2o/engine/v1/metrics.pb.ts';

/** A container's usage in a `metrics.k8s.io` PodMetrics: CPU in cores, memory (working set) in bytes. */
export interface ContainerUsage {
  cores: number;
  memoryBytes: bigint;
}

/** One PodMetrics sample of the sandbox container. */
export interface UsageSample {
  usage: ContainerUsage;
  /** When the sample was taken (PodMetrics `timestamp`). */
  timestamp: Date;
}

/** Size and free space of a filesystem, in bytes. */
export interface DiskUsage {
  totalBytes: bigint;
  availableBytes: bigint;
}

const CPU_SUFFIX: Readonly<Record<string, number>> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3 };
const MEMORY_SUFFIX: Readonly<Record<string, bigint>> = {
  '': 1n,
  k: 1000n,
  M: 1000n ** 2n,
  G: 1000n ** 3n,
  T: 1000n ** 4n,
  Ki: 1024n,
  Mi: 1024n ** 2n,
  Gi: 1024n ** 3n,
  Ti: 1024n ** 4n,
};

/** Cores of a CPU quantity as metrics-server writes them (`249966643n`, `250m`, `2`); undefined if not one. */
export function parseCpuCores(text: string): number | undefined {
  const match = /^([0-9]+(?:\.[0-9]+)?)(n|u|m|k|)$/.exec(text.trim());
  if (match === null) return undefined;
  return Number(match[1]) * (CPU_SUFFIX[match[2] ?? ''] ?? 1);
}

/** Bytes of a memory quantity (`104857600`, `102400Ki`, `100Mi`); undefined if not one. */
export function parseMemoryBytes(text: string): bigint | undefined {
  const match = /^([0-9]+)(Ki|Mi|Gi|Ti|k|M|G|T|)$/.exec(text.trim());
  if (match === null) return undefined;
  return BigInt(match[1] ?? '0') * (MEMORY_SUFFIX[match[2] ?? ''] ?? 1n);
}

/** The part of a PodMetrics object this service reads. */
export interface PodMetricsObject {
  timestamp?: string;
  containers?: { name?: string; usage?: Record<string, string> }[];
}

/** The sample of `container` in a PodMetrics object; undefined when it has none or garbled values. */
export function sampleOf(podMetrics: PodMetricsObject, container: string): UsageSample | undefined {
  const usage = podMetrics.containers?.find((c) => c.name === container)?.usage ?? {};
  const cores = parseCpuCores(usage['cpu'] ?? '');
  const memoryBytes = parseMemoryBytes(usage['memory'] ?? '');
  const timestamp = new Date(podMetrics.timestamp ?? '');
  if (cores === undefined || memoryBytes === undefined) return undefined;
  return Number.isNaN(timestamp.getTime()) ? undefined : { usage: { cores, memoryBytes }, timestamp };
}

/**
 * Size and free space from `df -Pk` (POSIX output: a header line, then `fs blocks used avail
 * capacity mount` in 1024-byte blocks; a long filesystem name never wraps with -P).
 */
export function parseDf(stdout: string): DiskUsage | undefined {
  const line = stdout.trim().split('\n')[1];
  const fields = line?.trim().split(/\s+/) ?? [];
  // Filesystem names hold no spaces in practice (overlay, tmpfs, /dev/…); mount points may.
  const numbers = fields.slice(1, 4);
  if (numbers.length < 3 || !numbers.every((n) => /^[0-9]+$/.test(n))) return undefined;
  const [blocks = '0', , available = '0'] = numbers;
  return { totalBytes: BigInt(blocks) * 1024n, availableBytes: BigInt(available) * 1024n };
}

/** What the ratio of CPU use is taken against: the template's limit, else the node's allocatable CPU. */
export function cpuCapacityCores(
  milliCpuLimit: number,
  nodeAllocatableCores: number | undefined,
): number | undefined {
  if (milliCpuLimit > 0) return milliCpuLimit / 1000;
  return nodeAllocatableCores !== undefined && nodeAllocatableCores > 0 ? nodeAllocatableCores : undefined;
}

/** Everything one ReadMetrics found; `undefined` marks what could not be collected. */
export interface Collected {
  sample: UsageSample | undefined;
  disk: DiskUsage | undefined;
  /** Cores the CPU ratio is taken against ({@link cpuCapacityCores}). */
  capacityCores: number | undefined;
  /** The template's memory limit in bytes; `"0"` or empty means none. */
  memoryLimitBytes: string;
  now: Date;
}

/** What strict mode would fail on: the names of the parts of `collected` that are missing. */
export function missingParts(collected: Collected): string[] {
  const missing: string[] = [];
  if (collected.sample === undefined)
    missing.push('CPU and memory (no PodMetrics sample of the sandbox container yet)');
  else if (collected.capacityCores === undefined)
    missing.push('the CPU capacity (no CPU limit, node unknown)');
  if (collected.disk === undefined) missing.push('disk usage (df failed in the sandbox)');
  return missing;
}

/** CPU use over capacity, within 0-1; 0 when either is unknown. */
function usageRatio(sample: UsageSample | undefined, capacityCores: number | undefined): number {
  if (sample === undefined || capacityCores === undefined) return 0;
  return Math.min(1, Math.max(0, sample.usage.cores / capacityCores));
}

/**
 * The Metrics of a collection. Missing parts read as zero; the memory limit is the template's
 * whatever else is missing (none when it is 0); the sample's time is `collectTime` (the call's
 * time when there is no sample).
 */
export function metricsOf(collected: Collected): Metrics {
  const { sample, disk } = collected;
  const limit = /^[1-9][0-9]*$/.test(collected.memoryLimitBytes)
    ? { limitBytes: collected.memoryLimitBytes }
    : {};
  return {
    memory: { currentBytes: String(sample?.usage.memoryBytes ?? 0n), ...limit },
    disk: { totalBytes: String(disk?.totalBytes ?? 0n), availableBytes: String(disk?.availableBytes ?? 0n) },
    cpu: { usageRatio: usageRatio(sample, collected.capacityCores) },
    collectTime: sample?.timestamp ?? collected.now,
  };
}
