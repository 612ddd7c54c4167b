/**
 * A profile's customisation of engine pods. Administrators write a PodTemplateSpec in YAML
 * (`yamlPodTemplateSpec`), which is applied to the pod template the operator builds as a
 * strategic merge patch — containers, env, volumes… merge by name, as `kubectl patch` merges
 * them — and a YAML list of tolerations (`yamlGpuTolerations`), which replaces the template's
 * tolerations on engines with GPUs, so GPU engines can reach tainted GPU nodes while CPU engines
 * stay off them.
 */
import type { V1PodTemplateSpec } from '@kubernetes/client-node';
import yaml from 'js-yaml';
import { StrategicMergeError } from './errors.ts';
import { copyJson, isObject, removeField, type JsonObject, type JsonValue } from './json.ts';
import { loadKubernetesYaml } from './kubernetes-yaml.ts';
import { strategicMerge } from './strategic-merge.ts';

/** What a profile says about its engines' pods. */
export interface PodTemplateCustomisation {
  /** A PodTemplateSpec (`metadata`, `spec`) in YAML, applied as a strategic merge patch; "" for none. */
  yamlPodTemplateSpec: string;
  /** A YAML list of tolerations that replaces the template's when `gpu` > 0; "" for none, "[]" clears. */
  yamlGpuTolerations: string;
  /** GPUs the engine asks for per pod. */
  gpu: number;
}

export type PodTemplateField = 'yamlPodTemplateSpec' | 'yamlGpuTolerations';

/** The profile's YAML cannot be applied; the message is meant for the profile's administrator. */
export class PodTemplateError extends Error {
  override readonly name = 'PodTemplateError';
  /** The profile field at fault. */
  readonly field: PodTemplateField;

  constructor(field: PodTemplateField, reason: string, options?: ErrorOptions) {
    super(`Cannot apply the profile's ${field} to the engine pods: ${reason}`, options);
    this.field = field;
  }
}

/** The fields a PodTemplateSpec patch may set at its top level. */
const TEMPLATE_FIELDS = new Set(['metadata', 'spec']);

/**
 * The pod template with the profile's customisation: `base` patched with yamlPodTemplateSpec,
 * then, only when `gpu` > 0 and yamlGpuTolerations is set, its tolerations replaced. `base` is
 * not changed.
 * @throws PodTemplateError when either YAML is invalid, has the wrong shape, or the patch cannot
 *   be applied to the template
 */
export function customisePodTemplate(
  base: V1PodTemplateSpec,
  customisation: PodTemplateCustomisation,
): V1PodTemplateSpec {
  const original = copyJson(base as JsonObject);
  const patch = parsePatch(customisation.yamlPodTemplateSpec);
  const patched = patch === undefined ? original : applyPatch(original, patch);
  const tolerations = customisation.gpu > 0 ? parseTolerations(customisation.yamlGpuTolerations) : undefined;
  if (tolerations !== undefined) replaceTolerations(patched, tolerations);
  return patched;
}

function parsePatch(text: string): JsonObject | undefined {
  const field = 'yamlPodTemplateSpec';
  const parsed = parseYaml(field, text);
  if (parsed === undefined) return undefined;
  if (!isObject(parsed)) throw new PodTemplateError(field, 'it must be a YAML mapping, a PodTemplateSpec');
  const unknown = Object.keys(parsed).filter((key) => !TEMPLATE_FIELDS.has(key) && !key.startsWith('$'));
  if (unknown.length > 0) {
    const names = unknown.map((key) => `"${key}"`).join(', ');
    throw new PodTemplateError(field, `a PodTemplateSpec has only "metadata" and "spec", not ${names}`);
  }
  return parsed;
}

function parseTolerations(text: string): JsonObject[] | undefined {
  const field = 'yamlGpuTolerations';
  const parsed = parseYaml(field, text);
  if (parsed === undefined) return undefined;
  if (!Array.isArray(parsed) || !parsed.every(isObject)) {
    throw new PodTemplateError(field, 'it must be a YAML list of tolerations (use "[]" to clear them)');
  }
  return parsed;
}

/** The YAML document as JSON; undefined when the text holds nothing but blanks and comments. */
function parseYaml(field: PodTemplateField, text: string): JsonValue | undefined {
  if (text.split('\n').every((line) => /^\s*(#.*)?$/.test(line))) return undefined;
  let parsed: unknown;
  try {
    parsed = loadKubernetesYaml(text);
  } catch (error: unknown) {
    const reason = error instanceof yaml.YAMLException ? error.message : String(error);
    throw new PodTemplateError(field, `it is not valid YAML: ${reason}`, { cause: error });
  }
  if (parsed === undefined || parsed === null) {
    throw new PodTemplateError(field, 'it is null (leave it empty to set nothing)');
  }
  return parsed as JsonValue;
}

function applyPatch(original: JsonObject, patch: JsonObject): JsonObject {
  try {
    return withoutLeftovers(strategicMerge(original, patch, 'PodTemplateSpec'));
  } catch (error: unknown) {
    if (error instanceof StrategicMergeError) {
      throw new PodTemplateError('yamlPodTemplateSpec', error.message, { cause: error });
    }
    throw error;
  }
}

/**
 * Drops what a strategic merge can leave behind that is no pod field: directive keys and
 * null values of elements the patch added as they were. Kubernetes decodes a patched object
 * into its typed form, which drops them too; the operator's objects should not carry them.
 */
function withoutLeftovers<T extends JsonValue>(value: T): T {
  if (Array.isArray(value)) {
    value.forEach(withoutLeftovers);
  } else if (isObject(value)) {
    for (const [key, child] of Object.entries(value)) {
      if (key.startsWith('$') || child === null) removeField(value, key);
      else withoutLeftovers(child);
    }
  }
  return value;
}

function replaceTolerations(template: JsonObject, tolerations: JsonObject[]): void {
  const spec = template['spec'];
  // An empty list clears them: the apiserver keeps no list and an empty list alike.
  if (!isObject(spec)) {
    if (tolerations.length > 0) template['spec'] = { tolerations };
  } else if (tolerations.length === 0) {
    removeField(spec, 'tolerations');
  } else {
    spec['tolerations'] = tolerations;
  }
}
