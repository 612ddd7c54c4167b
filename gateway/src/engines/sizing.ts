/**
 * H2O cluster size recommendations, from H2O-3's published sizing guidance: a cluster needs
 * memory of about four times the size of the data it loads (the parsed frame plus room for
 * algorithms), and a parsed frame takes about four bytes per value once H2O compresses its
 * columns.
 *
 *   raw dataset (bytes on disk)      required = 4 × datasetSizeBytes
 *   compressed dataset (rows × cols) required = 4 × (rows × columns × 4 B)
 *
 * The recommendation uses as few nodes as the limits allow: with a per-node maximum, nodes =
 * ⌈required / max per node⌉ (at least nodeCountMin, at most nodeCountMax); memory per node =
 * ⌈required / nodes⌉ rounded up to a whole GiB, at least memoryBytesPerNodeMin and at most
 * memoryBytesPerNodeMax. Data beyond what the limits allow gets the largest allowed size.
 */
import { invalidFields, type FieldViolation } from '../errors/api-error.ts';

export const GIB = 1024n ** 3n;
/** Memory per byte of data, and compressed bytes per value. */
export const MEMORY_PER_DATA_BYTE = 4n;
export const BYTES_PER_COMPRESSED_VALUE = 4n;

export interface SizeLimits {
  memoryBytesPerNodeMin: string;
  memoryBytesPerNodeMax?: string | undefined;
  nodeCountMin: string;
  nodeCountMax?: string | undefined;
}

interface CheckedLimits {
  memoryBytesPerNodeMin: bigint;
  memoryBytesPerNodeMax: bigint | undefined;
  nodeCountMin: bigint;
  nodeCountMax: bigint | undefined;
}

export interface EngineSize {
  nodeCount: string;
  memoryBytes: string;
}

const ceilDiv = (a: bigint, b: bigint): bigint => (a + b - 1n) / b;
const min = (a: bigint, b: bigint | undefined): bigint => (b !== undefined && b < a ? b : a);
const max = (a: bigint, b: bigint): bigint => (a > b ? a : b);

function checkLimits(limits: SizeLimits | undefined): CheckedLimits {
  const violations: FieldViolation[] = [];
  if (limits === undefined) throw invalidFields([{ field: 'limits', description: 'is required' }]);
  const read = (field: string, value: string | undefined, lowest: bigint): bigint | undefined => {
    if (value === undefined) return undefined;
    const n = BigInt(value);
    if (n < lowest)
      violations.push({ field: `limits.${field}`, description: `must be at least ${lowest}, got ${value}` });
    return n;
  };
  const result = {
    memoryBytesPerNodeMin: read('memory_bytes_per_node_min', limits.memoryBytesPerNodeMin, 1n),
    memoryBytesPerNodeMax: read('memory_bytes_per_node_max', limits.memoryBytesPerNodeMax, 1n),
    nodeCountMin: read('node_count_min', limits.nodeCountMin, 1n),
    nodeCountMax: read('node_count_max', limits.nodeCountMax, 1n),
  };
  const {
    memoryBytesPerNodeMin: memMin = 1n,
    memoryBytesPerNodeMax: memMax,
    nodeCountMin: nMin = 1n,
    nodeCountMax: nMax,
  } = result;
  if (memMax !== undefined && memMax < memMin)
    violations.push({
      field: 'limits.memory_bytes_per_node_max',
      description: 'must be at least memory_bytes_per_node_min',
    });
  if (nMax !== undefined && nMax < nMin)
    violations.push({ field: 'limits.node_count_max', description: 'must be at least node_count_min' });
  if (violations.length > 0) throw invalidFields(violations);
  return {
    memoryBytesPerNodeMin: memMin,
    memoryBytesPerNodeMax: memMax,
    nodeCountMin: nMin,
    nodeCountMax: nMax,
  };
}

/** The recommended size for `required` bytes of cluster memory within `limits`. */
export function sizeFor(required: bigint, limits: SizeLimits | undefined): EngineSize {
  const {
    memoryBytesPerNodeMin: memMin,
    memoryBytesPerNodeMax: memMax,
    nodeCountMin: nMin,
    nodeCountMax: nMax,
  } = checkLimits(limits);
  const wantedNodes = memMax === undefined ? nMin : ceilDiv(required, memMax);
  const nodes = min(max(wantedNodes, nMin), nMax);
  const perNode = ceilDiv(ceilDiv(required, nodes), GIB) * GIB;
  const memory = min(max(perNode, memMin), memMax);
  return { nodeCount: nodes.toString(), memoryBytes: memory.toString() };
}

/** Memory a raw dataset of `bytes` needs. */
export function rawDatasetMemory(bytes: bigint): bigint {
  return MEMORY_PER_DATA_BYTE * bytes;
}

/** Memory a dataset of `rows` × `columns` needs once parsed and compressed. */
export function compressedDatasetMemory(rows: bigint, columns: bigint): bigint {
  return MEMORY_PER_DATA_BYTE * rows * columns * BYTES_PER_COMPRESSED_VALUE;
}
