import yaml from 'js-yaml';
import type { FieldViolation } from '../errors/api-error.ts';
import {
  durationConstraintProblems,
  durationNanos,
  numericConstraintProblems,
  type Duration,
  type DurationConstraint,
  type NumericConstraint,
} from './constraints.ts';
import { extendedResourceProblem, objectNameProblem } from './kubernetes.ts';
import { MAX_LENGTH } from './names.ts';

/** The GPU resource that engines request when a profile names none. */
export const DEFAULT_GPU_RESOURCE_NAME = 'nvidia.com/gpu';

/** The fields every profile kind has. */
export interface CommonProfile {
  displayName: string;
  priority: number;
  assignedOidcRolesEnabled: boolean;
  assignedOidcRoles: string[];
  maxRunningEngines?: number | undefined;
  cpuConstraint?: NumericConstraint | undefined;
  gpuConstraint?: NumericConstraint | undefined;
  memoryBytesConstraint?: NumericConstraint | undefined;
  maxIdleDurationConstraint?: DurationConstraint | undefined;
  maxRunningDurationConstraint?: DurationConstraint | undefined;
  yamlPodTemplateSpec: string;
  yamlGpuTolerations: string;
  gpuResourceName: string;
}

/** A numeric constraint that must be present, with the smallest `min` it may have. */
export interface NumericRule {
  /** snake_case field, e.g. `cpu_constraint`. */
  field: string;
  value: NumericConstraint | undefined;
  /** e.g. 1 for cpu: an engine without a cpu cannot run. */
  lowest: bigint;
}

/** Violations of one required numeric constraint, named `{prefix}.{field}.{part}`. */
export function numericViolations(prefix: string, rule: NumericRule): FieldViolation[] {
  const field = `${prefix}.${rule.field}`;
  if (rule.value === undefined) return [{ field, description: 'is required' }];
  const violations = numericConstraintProblems(rule.value).map((p) => ({
    field: `${field}.${snake(p.field)}`,
    description: p.problem,
  }));
  if (BigInt(rule.value.min) < rule.lowest) {
    violations.push({
      field: `${field}.min`,
      description: `must be at least ${rule.lowest}, got ${rule.value.min}`,
    });
  }
  return violations;
}

/** Violations of one required duration constraint. */
export function durationViolations(
  prefix: string,
  field: string,
  value: DurationConstraint | undefined,
): FieldViolation[] {
  const path = `${prefix}.${field}`;
  if (value === undefined) return [{ field: path, description: 'is required' }];
  return durationConstraintProblems(value).map((p) => ({
    field: `${path}.${p.field}`,
    description: p.problem,
  }));
}

/** A violation when an optional duration is negative. */
export function nonNegativeDuration(field: string, value: Duration | undefined): FieldViolation[] {
  return value !== undefined && durationNanos(value) < 0n
    ? [{ field, description: 'must not be negative' }]
    : [];
}

/** Violations of the fields all profiles share, except the numeric constraints (kinds differ). */
export function commonProfileViolations(prefix: string, profile: CommonProfile): FieldViolation[] {
  const violations: FieldViolation[] = [];
  if (profile.displayName.length > MAX_LENGTH) {
    violations.push({
      field: `${prefix}.display_name`,
      description: `must be at most ${MAX_LENGTH} characters, got ${profile.displayName.length}`,
    });
  }
  if (profile.maxRunningEngines !== undefined && profile.maxRunningEngines < 0) {
    violations.push({ field: `${prefix}.max_running_engines`, description: 'must not be negative' });
  }
  profile.assignedOidcRoles.forEach((role, index) => {
    if (role.trim() === '')
      violations.push({ field: `${prefix}.assigned_oidc_roles[${index}]`, description: 'must not be empty' });
  });
  violations.push(
    ...durationViolations(prefix, 'max_idle_duration_constraint', profile.maxIdleDurationConstraint),
    ...durationViolations(prefix, 'max_running_duration_constraint', profile.maxRunningDurationConstraint),
    ...yamlViolations(`${prefix}.yaml_pod_template_spec`, profile.yamlPodTemplateSpec, 'mapping'),
    ...yamlViolations(`${prefix}.yaml_gpu_tolerations`, profile.yamlGpuTolerations, 'sequence'),
  );
  const gpuName =
    profile.gpuResourceName === '' ? undefined : extendedResourceProblem(profile.gpuResourceName);
  if (gpuName) violations.push({ field: `${prefix}.gpu_resource_name`, description: gpuName });
  return violations;
}

/** Violations of an optional Kubernetes object name (e.g. a storage class). */
export function objectNameViolations(field: string, value: string): FieldViolation[] {
  const problem = value === '' ? undefined : objectNameProblem(value);
  return problem ? [{ field, description: problem }] : [];
}

/**
 * YAML that the operator will apply to pods must parse, and be a mapping (a PodTemplateSpec) or
 * a sequence (tolerations). Empty means none.
 */
export function yamlViolations(field: string, text: string, shape: 'mapping' | 'sequence'): FieldViolation[] {
  if (text.trim() === '') return [];
  let parsed: unknown;
  try {
    parsed = yaml.load(text);
  } catch (error: unknown) {
    const reason = error instanceof yaml.YAMLException ? error.reason : 'invalid YAML';
    return [{ field, description: `is not valid YAML: ${reason}` }];
  }
  if (shape === 'mapping' && !isMapping(parsed))
    return [{ field, description: 'must be a YAML mapping (a pod template spec)' }];
  if (shape === 'sequence' && !(Array.isArray(parsed) && parsed.every(isMapping))) {
    return [{ field, description: 'must be a YAML list of tolerations' }];
  }
  return [];
}

/** Violations of configuration map keys: non-empty, no whitespace. */
export function configKeyViolations(
  field: string,
  config: Readonly<Record<string, string>>,
): FieldViolation[] {
  return Object.keys(config).flatMap((key) =>
    key.trim() === '' || /\s/.test(key)
      ? [{ field: `${field}["${key}"]`, description: 'keys must be non-empty and contain no spaces' }]
      : [],
  );
}

/**
 * Whether a caller with `roles` may use the profile: everyone unless role assignment is on, then
 * only holders of a listed role (an empty list admits nobody).
 */
export function isAssigned(
  profile: { assignedOidcRolesEnabled: boolean; assignedOidcRoles: readonly string[] },
  roles: readonly string[],
): boolean {
  return !profile.assignedOidcRolesEnabled || profile.assignedOidcRoles.some((role) => roles.includes(role));
}

/** Profiles by priority (lower first), then by name. */
export function byPriority(
  a: { priority: number; name: string },
  b: { priority: number; name: string },
): number {
  return a.priority - b.priority || a.name.localeCompare(b.name);
}

function isMapping(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function snake(field: string): string {
  return field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}
