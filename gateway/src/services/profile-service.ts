import { RESOURCE_KINDS, type ResourceKind } from '../../../shared/resources.ts';
import type { Handlers } from '../call/handler.ts';
import { invalidFields, type FieldViolation } from '../errors/api-error.ts';
import {
  DAIEngineProfile_ConfigEditability,
  type DAIEngineProfile,
} from '../gen/ai/h2o/engine/v1/dai_engine_profile.pb.ts';
import type { H2OEngineProfile } from '../gen/ai/h2o/engine/v1/h2o_engine_profile.pb.ts';
import type { NotebookEngineProfile } from '../gen/ai/h2o/engine/v1/notebook_engine_profile.pb.ts';
import type { MaskedResource } from '../validation/update-mask.ts';
import { resourceIdProblem } from '../validation/names.ts';
import {
  byPriority,
  commonProfileViolations,
  configKeyViolations,
  DEFAULT_GPU_RESOURCE_NAME,
  isAssigned,
  nonNegativeDuration,
  numericViolations,
  objectNameViolations,
  type CommonProfile,
  type NumericRule,
} from '../validation/profile.ts';
import {
  created,
  parentWorkspace,
  ResourceService,
  standardHandlers,
  type Resource,
  type ServiceDeps,
} from './resource-service.ts';

type Profile = CommonProfile & Resource & { enabled: boolean };

/** The notebook profile's defaults for its git checkout. */
export const DEFAULT_GIT_REF = 'HEAD';
export const DEFAULT_GIT_DIRECTORY_NAME = 'Example';

/** What one profile kind adds to the common rules. */
interface ProfileKind<T extends Profile> {
  kind: ResourceKind;
  mask: MaskedResource;
  /** The numeric constraints the kind has, with their lowest allowed minimum. */
  numeric(profile: T): NumericRule[];
  /** Kind-specific defaults. */
  defaults(profile: T): T;
  /** Kind-specific violations. */
  violations(profile: T, prefix: string): FieldViolation[];
}

function profileService<T extends Profile>(deps: ServiceDeps, profileKind: ProfileKind<T>): Handlers {
  const service = new ResourceService<T>(deps, {
    kind: profileKind.kind,
    mask: profileKind.mask,
    idProblem: resourceIdProblem,
    prepare(profile, prefix) {
      const filled = profileKind.defaults({
        ...profile,
        gpuResourceName: profile.gpuResourceName === '' ? DEFAULT_GPU_RESOURCE_NAME : profile.gpuResourceName,
      });
      const violations = [
        ...commonProfileViolations(prefix, filled),
        ...profileKind.numeric(filled).flatMap((rule) => numericViolations(prefix, rule)),
        ...profileKind.violations(filled, prefix),
      ];
      if (violations.length > 0) throw invalidFields(violations);
      return filled;
    },
    compare: byPriority,
  });
  const { kind, names } = service;
  return {
    ...standardHandlers(service),

    // The profiles the caller may use to create engines: enabled, and assigned to one of the
    // caller's roles where role assignment is on.
    [`${names.service}.ListAssigned${kind.kind}s`]: async (request, context) => {
      const parent = request['parent'] as string;
      const workspace = parentWorkspace(parent);
      await service.authorize(context, 'LIST_ASSIGNED', workspace);
      const usable = (await service.all(workspace)).filter(
        (p) => p.enabled && isAssigned(p, context.caller.roles),
      );
      return service.page(usable, request, `assigned:parent=${parent}`);
    },

    // A new profile with the source's settings, in the same or another workspace.
    [`${names.service}.Copy${kind.kind}`]: async (request, context) => {
      const source = request['name'] as string;
      const sourceWorkspace = service.workspaceOf(source);
      const targetWorkspace = parentWorkspace(request['parent'] as string);
      await service.authorize(context, 'GET', sourceWorkspace);
      await service.authorize(context, 'CREATE', targetWorkspace);
      const id = service.newId(request[names.idField] as string);
      const { message } = await service.get(source);
      const copy = created(message, service.nameIn(targetWorkspace, id), context.caller);
      return { [names.field]: await service.insert(copy) };
    },
  };
}

const cpu = (p: CommonProfile): NumericRule => ({
  field: 'cpu_constraint',
  value: p.cpuConstraint,
  lowest: 1n,
});
const gpu = (p: CommonProfile): NumericRule => ({
  field: 'gpu_constraint',
  value: p.gpuConstraint,
  lowest: 0n,
});
const memory = (p: CommonProfile): NumericRule => ({
  field: 'memory_bytes_constraint',
  value: p.memoryBytesConstraint,
  lowest: 1n,
});
const storage = (p: { storageBytesConstraint?: CommonProfile['cpuConstraint'] }): NumericRule => ({
  field: 'storage_bytes_constraint',
  value: p.storageBytesConstraint,
  lowest: 1n,
});

/** DAIEngineProfileService. */
export function daiEngineProfileService(deps: ServiceDeps): Handlers {
  return profileService<DAIEngineProfile>(deps, {
    kind: RESOURCE_KINDS.DAIEngineProfile,
    mask: 'daiEngineProfile',
    numeric: (p) => [cpu(p), gpu(p), memory(p), storage(p)],
    defaults: (p) => ({
      ...p,
      // Unset editability means full; stored explicitly so every reader sees the same.
      configEditability:
        p.configEditability === DAIEngineProfile_ConfigEditability.CONFIG_EDITABILITY_UNSPECIFIED
          ? DAIEngineProfile_ConfigEditability.CONFIG_EDITABILITY_FULL
          : p.configEditability,
    }),
    violations: (p, prefix) => [
      ...nonNegativeDuration(`${prefix}.max_non_interaction_duration`, p.maxNonInteractionDuration),
      ...nonNegativeDuration(`${prefix}.max_unused_duration`, p.maxUnusedDuration),
      ...configKeyViolations(`${prefix}.configuration_override`, p.configurationOverride),
      ...configKeyViolations(`${prefix}.base_configuration`, p.baseConfiguration),
      ...objectNameViolations(`${prefix}.data_directory_storage_class`, p.dataDirectoryStorageClass),
    ],
  });
}

/** H2OEngineProfileService. */
export function h2oEngineProfileService(deps: ServiceDeps): Handlers {
  return profileService<H2OEngineProfile>(deps, {
    kind: RESOURCE_KINDS.H2OEngineProfile,
    mask: 'h2oEngineProfile',
    numeric: (p) => [
      { field: 'node_count_constraint', value: p.nodeCountConstraint, lowest: 1n },
      cpu(p),
      gpu(p),
      memory(p),
    ],
    defaults: (p) => p,
    violations: () => [],
  });
}

/** NotebookEngineProfileService. */
export function notebookEngineProfileService(deps: ServiceDeps): Handlers {
  return profileService<NotebookEngineProfile>(deps, {
    kind: RESOURCE_KINDS.NotebookEngineProfile,
    mask: 'notebookEngineProfile',
    numeric: (p) => [cpu(p), gpu(p), memory(p), storage(p)],
    defaults: (p) => ({
      ...p,
      gitRef: p.gitRef === '' ? DEFAULT_GIT_REF : p.gitRef,
      gitDirectoryName: p.gitDirectoryName === '' ? DEFAULT_GIT_DIRECTORY_NAME : p.gitDirectoryName,
    }),
    violations: (p, prefix) => [
      ...objectNameViolations(`${prefix}.storage_class_name`, p.storageClassName),
      ...gitViolations(p, prefix),
    ],
  });
}

/** The checkout must have a repository to sync and a plain folder name to land in. */
function gitViolations(p: NotebookEngineProfile, prefix: string): FieldViolation[] {
  const violations: FieldViolation[] = [];
  if (p.syncGitRepositoryEnabled && p.gitRepository.trim() === '') {
    violations.push({
      field: `${prefix}.git_repository`,
      description: 'is required when sync_git_repository_enabled is true',
    });
  }
  if (p.gitDirectoryName.includes('/') || p.gitDirectoryName === '.' || p.gitDirectoryName === '..') {
    violations.push({
      field: `${prefix}.git_directory_name`,
      description: `"${p.gitDirectoryName}" must be a single folder name`,
    });
  }
  return violations;
}
