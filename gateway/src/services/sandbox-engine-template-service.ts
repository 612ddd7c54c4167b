/**
 * SandboxEngineTemplateService: what administrators decide about the sandboxes built from a
 * template — resources, environment, pod customisation and the idle and running limits.
 */
import type { Handlers } from '../call/handler.ts';
import { serviceHandlers } from '../call/service-impl.ts';
import { invalidFields, type FieldViolation } from '../errors/api-error.ts';
import type { SandboxEngineTemplate } from '../gen/ai/h2o/engine/v1/sandbox_engine_template.pb.ts';
import { SandboxEngineTemplateServiceService } from '../gen/ai/h2o/engine/v1/sandbox_engine_template_service.pb.ts';
import { durationNanos, type Duration } from '../validation/constraints.ts';
import { extendedResourceProblem } from '../validation/kubernetes.ts';
import { MAX_LENGTH, resourceIdProblem } from '../validation/names.ts';
import { yamlViolations } from '../validation/profile.ts';
import { MESSAGE_KINDS } from './message-kinds.ts';
import { ResourceService, standardOperations, type ServiceDeps } from './resource-service.ts';

/** No limit, as templates spell it. */
const NO_LIMIT: Duration = { seconds: '0', nanos: 0 };
/** Names Kubernetes accepts for container environment variables. */
const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

function durationViolations(field: string, value: Duration | undefined, required: boolean): FieldViolation[] {
  if (value === undefined) return required ? [{ field, description: 'is required ("0s" for no limit)' }] : [];
  return durationNanos(value) < 0n ? [{ field, description: 'must not be negative' }] : [];
}

type Add = (field: string, description: string) => void;

function memoryViolations(t: SandboxEngineTemplate, add: Add): void {
  if (BigInt(t.memoryBytesLimit) <= 0n) add('memory_bytes_limit', 'is required and must be more than 0');
  if (BigInt(t.memoryBytesRequest) < 0n) add('memory_bytes_request', 'must not be negative');
  else if (BigInt(t.memoryBytesRequest) > BigInt(t.memoryBytesLimit))
    add('memory_bytes_request', `must be at most memory_bytes_limit ${t.memoryBytesLimit}`);
  if (BigInt(t.storageBytes) < 0n) add('storage_bytes', 'must not be negative');
}

/** Requests must not exceed limits; a limit of 0 (CPU) means none. */
function resourceViolations(t: SandboxEngineTemplate, prefix: string): FieldViolation[] {
  const violations: FieldViolation[] = [];
  const add: Add = (field, description) => {
    violations.push({ field: `${prefix}.${field}`, description });
  };
  memoryViolations(t, add);
  if (t.milliCpuLimit < 0) add('milli_cpu_limit', 'must not be negative');
  if (t.milliCpuRequest < 0) add('milli_cpu_request', 'must not be negative');
  else if (t.milliCpuLimit > 0 && t.milliCpuRequest > t.milliCpuLimit)
    add('milli_cpu_request', `must be at most milli_cpu_limit ${t.milliCpuLimit}`);
  if (t.gpu < 0) add('gpu', 'must not be negative');
  const gpuResource = t.gpuResource === '' ? undefined : extendedResourceProblem(t.gpuResource);
  if (gpuResource) add('gpu_resource', gpuResource);
  return violations;
}

/** Every problem of a template at once, named below `prefix` (AIP-193). */
export function templateViolations(t: SandboxEngineTemplate, prefix: string): FieldViolation[] {
  const violations = resourceViolations(t, prefix);
  if (t.displayName.length > MAX_LENGTH)
    violations.push({
      field: `${prefix}.display_name`,
      description: `must be at most ${MAX_LENGTH} characters, got ${t.displayName.length}`,
    });
  for (const name of Object.keys(t.environmentalVariables)) {
    if (!ENV_NAME.test(name))
      violations.push({
        field: `${prefix}.environmental_variables["${name}"]`,
        description: 'must be a name of letters, digits, "_", "-" and ".", not starting with a digit',
      });
  }
  violations.push(
    ...yamlViolations(`${prefix}.yaml_pod_template_spec`, t.yamlPodTemplateSpec, 'mapping'),
    ...durationViolations(`${prefix}.max_idle_duration`, t.maxIdleDuration, true),
    ...durationViolations(`${prefix}.max_running_duration`, t.maxRunningDuration, false),
  );
  return violations;
}

/**
 * A valid template with the defaults filled in: requests equal to the limits when unset, and
 * no running limit when a client (1.4) does not know the field.
 */
export function preparedTemplate(t: SandboxEngineTemplate, prefix: string): SandboxEngineTemplate {
  const violations = templateViolations(t, prefix);
  if (violations.length > 0) throw invalidFields(violations);
  return {
    ...t,
    milliCpuRequest: t.milliCpuRequest === 0 ? t.milliCpuLimit : t.milliCpuRequest,
    memoryBytesRequest: BigInt(t.memoryBytesRequest) === 0n ? t.memoryBytesLimit : t.memoryBytesRequest,
    maxRunningDuration: t.maxRunningDuration ?? NO_LIMIT,
  };
}

/** The RPCs of SandboxEngineTemplateService. */
export function sandboxEngineTemplateService(deps: ServiceDeps): Handlers {
  const service = new ResourceService<SandboxEngineTemplate>(deps, {
    kind: MESSAGE_KINDS.SandboxEngineTemplate,
    mask: 'sandboxEngineTemplate',
    idProblem: resourceIdProblem,
    prepare: preparedTemplate,
    compare: (a, b) => a.name.localeCompare(b.name),
    // 1.4 clients have no max_running_duration and leave it out even of `*` updates.
    keepAbsent: (merged, current) =>
      merged.maxRunningDuration === undefined
        ? { ...merged, maxRunningDuration: current.maxRunningDuration }
        : merged,
  });
  const templates = standardOperations(service);
  return serviceHandlers(SandboxEngineTemplateServiceService, {
    createSandboxEngineTemplate: async (request, context) => ({
      sandboxEngineTemplate: await templates.create(
        {
          parent: request.parent,
          id: request.sandboxEngineTemplateId,
          resource: request.sandboxEngineTemplate,
        },
        context,
      ),
    }),
    getSandboxEngineTemplate: async (request, context) => ({
      sandboxEngineTemplate: await templates.get(request.name, context),
    }),
    listSandboxEngineTemplates: async (request, context) => {
      const { items, nextPageToken } = await templates.list(request, context);
      return { sandboxEngineTemplates: items, nextPageToken };
    },
    updateSandboxEngineTemplate: async (request, context) => ({
      sandboxEngineTemplate: await templates.update(
        { resource: request.sandboxEngineTemplate, updateMask: request.updateMask },
        context,
      ),
    }),
    deleteSandboxEngineTemplate: async (request, context) => {
      await templates.delete(request.name, context);
      return {};
    },
  });
}
