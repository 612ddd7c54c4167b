/**
 * How a profile shapes an engine: defaults for what the user leaves unset, inclusive bounds for
 * what the user sets, and per-user caps across running engines. Pure functions.
 */
import type { FieldViolation } from '../errors/api-error.ts';
import {
  durationNanos,
  withinNumeric,
  type Duration,
  type DurationConstraint,
  type NumericConstraint,
} from '../validation/constraints.ts';

/** The sizing fields of an engine (all kinds; a kind has a subset). */
export interface EngineSettings {
  cpu?: number | undefined;
  gpu?: number | undefined;
  memoryBytes?: string | undefined;
  storageBytes?: string | undefined;
  nodeCount?: number | undefined;
  maxIdleDuration?: Duration | undefined;
  maxRunningDuration?: Duration | undefined;
}

/** The constraints of a profile (all kinds; a kind has a subset). */
export interface ProfileConstraints {
  cpuConstraint?: NumericConstraint | undefined;
  gpuConstraint?: NumericConstraint | undefined;
  memoryBytesConstraint?: NumericConstraint | undefined;
  storageBytesConstraint?: NumericConstraint | undefined;
  nodeCountConstraint?: NumericConstraint | undefined;
  maxIdleDurationConstraint?: DurationConstraint | undefined;
  maxRunningDurationConstraint?: DurationConstraint | undefined;
}

type NumericField = 'cpu' | 'gpu' | 'memoryBytes' | 'storageBytes' | 'nodeCount';
type DurationField = 'maxIdleDuration' | 'maxRunningDuration';

const NUMERIC: readonly { field: NumericField; snake: string; int64: boolean }[] = [
  { field: 'cpu', snake: 'cpu', int64: false },
  { field: 'gpu', snake: 'gpu', int64: false },
  { field: 'memoryBytes', snake: 'memory_bytes', int64: true },
  { field: 'storageBytes', snake: 'storage_bytes', int64: true },
  { field: 'nodeCount', snake: 'node_count', int64: false },
];

const DURATIONS: readonly { field: DurationField; snake: string }[] = [
  { field: 'maxIdleDuration', snake: 'max_idle_duration' },
  { field: 'maxRunningDuration', snake: 'max_running_duration' },
];

const seconds = (d: Duration): string => `${d.seconds}s`;

/**
 * The engine with unset fields taken from the profile's constraint defaults, and the violations
 * of set fields outside the constraints (min and max inclusive; no max means unlimited). Only
 * fields the engine kind has (`fields`) are considered.
 */
export function applyConstraints<T extends EngineSettings>(
  engine: T,
  profile: ProfileConstraints,
  options: { prefix: string; fields: readonly (NumericField | DurationField)[] },
): { engine: T; violations: FieldViolation[] } {
  const result: T = { ...engine };
  const violations: FieldViolation[] = [];
  const settle = (
    field: string,
    value: unknown,
    fallback: unknown,
    problem: () => FieldViolation | undefined,
  ): void => {
    // The fields are the settings this module lists, each its profile constraint's type.
    if (value === undefined) Reflect.set(result, field, fallback);
    else {
      const violation = problem();
      if (violation) violations.push(violation);
    }
  };
  for (const spec of NUMERIC.filter((n) => options.fields.includes(n.field))) {
    const constraint = profile[`${spec.field}Constraint`];
    if (constraint === undefined) continue;
    const value = engine[spec.field];
    settle(spec.field, value, spec.int64 ? constraint.default : Number(constraint.default), () =>
      value === undefined || withinNumeric(BigInt(value), constraint)
        ? undefined
        : outside(`${options.prefix}.${spec.snake}`, String(value), shown(constraint, String)),
    );
  }
  for (const spec of DURATIONS.filter((d) => options.fields.includes(d.field))) {
    const constraint = profile[`${spec.field}Constraint`];
    const value = engine[spec.field];
    settle(spec.field, value, constraint?.default, () =>
      value === undefined || constraint === undefined || withinDuration(value, constraint)
        ? undefined
        : outside(`${options.prefix}.${spec.snake}`, seconds(value), shown(constraint, seconds)),
    );
  }
  return { engine: result, violations };
}

function withinDuration(value: Duration, constraint: DurationConstraint): boolean {
  const n = durationNanos(value);
  const min = constraint.min === undefined ? 0n : durationNanos(constraint.min);
  return n >= min && (constraint.max === undefined || n <= durationNanos(constraint.max));
}

/** A constraint's bounds as text: `at least 1` or `between 1 and 8`. */
function shown<V>(constraint: { min?: V | undefined; max?: V | undefined }, show: (v: V) => string): string {
  const low = constraint.min === undefined ? '0' : show(constraint.min);
  return constraint.max === undefined ? `at least ${low}` : `between ${low} and ${show(constraint.max)}`;
}

function outside(field: string, got: string, range: string): FieldViolation {
  return { field, description: `must be ${range} (the profile's limits), got ${got}` };
}

/**
 * Why starting `candidate` would exceed the profile's per-user caps, given the same user's
 * engines already running with that profile: the number of running engines
 * (maxRunningEngines), and each resource's cumulative total (cumulativeMax). `undefined` when
 * it fits.
 */
/** Whether the profile caps its users' running engines at all (a count or a cumulative maximum). */
export function hasCaps(profile: ProfileConstraints & { maxRunningEngines?: number | undefined }): boolean {
  return (
    profile.maxRunningEngines !== undefined ||
    NUMERIC.some(({ field }) => profile[`${field}Constraint`]?.cumulativeMax !== undefined)
  );
}

export function quotaProblem(
  running: readonly EngineSettings[],
  candidate: EngineSettings,
  profile: ProfileConstraints & { maxRunningEngines?: number | undefined },
): string | undefined {
  if (profile.maxRunningEngines !== undefined && running.length + 1 > profile.maxRunningEngines) {
    return `the profile allows ${profile.maxRunningEngines} running engines per user, and ${running.length} already run`;
  }
  for (const { field, snake } of NUMERIC) {
    const cap = profile[`${field}Constraint`]?.cumulativeMax;
    const wanted = candidate[field];
    if (cap === undefined || wanted === undefined) continue;
    const used = running.reduce((sum, e) => sum + BigInt(e[field] ?? 0), 0n);
    if (used + BigInt(wanted) > BigInt(cap)) {
      return `${snake} of running engines would total ${used + BigInt(wanted)}, over the profile's cumulative maximum ${cap}`;
    }
  }
  return undefined;
}
