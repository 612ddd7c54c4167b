/** A numeric profile constraint as the generated types hold it (int64 as decimal strings). */
export interface NumericConstraint {
  min: string;
  max?: string | undefined;
  default: string;
  cumulativeMax?: string | undefined;
}

/** A duration as the generated types hold it. */
export interface Duration {
  seconds: string;
  nanos: number;
}

/** A duration profile constraint. */
export interface DurationConstraint {
  min?: Duration | undefined;
  max?: Duration | undefined;
  default?: Duration | undefined;
}

/** Problems by sub-field (`min`, `default`, …), empty when the constraint is consistent. */
export type ConstraintProblems = { field: string; problem: string }[];

/**
 * Checks min <= default <= max (inclusive; an unset max means unlimited), that nothing is
 * negative, and that cumulativeMax, when set, admits at least the default.
 */
export function numericConstraintProblems(c: NumericConstraint): ConstraintProblems {
  const min = BigInt(c.min);
  const def = BigInt(c.default);
  const problems: ConstraintProblems = [];
  if (min < 0n) problems.push({ field: 'min', problem: `must not be negative, got ${c.min}` });
  if (def < min)
    problems.push({ field: 'default', problem: `must be at least min ${c.min}, got ${c.default}` });
  if (c.max !== undefined && BigInt(c.max) < def) {
    problems.push({ field: 'max', problem: `must be at least default ${c.default}, got ${c.max}` });
  }
  if (c.cumulativeMax !== undefined && BigInt(c.cumulativeMax) < def) {
    problems.push({
      field: 'cumulativeMax',
      problem: `must be at least default ${c.default}, got ${c.cumulativeMax}`,
    });
  }
  return problems;
}

/** Nanoseconds of a duration, exact. */
export function durationNanos(d: Duration): bigint {
  return BigInt(d.seconds) * 1_000_000_000n + BigInt(d.nanos);
}

/** Checks that min and default are set, nothing is negative, and min <= default <= max. */
export function durationConstraintProblems(c: DurationConstraint): ConstraintProblems {
  if (c.min === undefined) return [{ field: 'min', problem: 'is required' }];
  if (c.default === undefined) return [{ field: 'default', problem: 'is required' }];
  const min = durationNanos(c.min);
  const def = durationNanos(c.default);
  const problems: ConstraintProblems = [];
  if (min < 0n) problems.push({ field: 'min', problem: 'must not be negative' });
  if (def < min) problems.push({ field: 'default', problem: 'must be at least min' });
  if (c.max !== undefined && durationNanos(c.max) < def)
    problems.push({ field: 'max', problem: 'must be at least default' });
  return problems;
}

/** Whether `value` lies within the constraint's inclusive bounds. */
export function withinNumeric(value: bigint, c: NumericConstraint): boolean {
  return value >= BigInt(c.min) && (c.max === undefined || value <= BigInt(c.max));
}
