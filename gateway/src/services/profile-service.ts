import type { CallContext, Handlers } from '../call/handler.ts';
import { serviceHandlers } from '../call/service-impl.ts';
import { invalidFields, type FieldViolation } from '../errors/api-error.ts';
import { DAIEngineProfile_ConfigEditability } from '../gen/ai/h2o/engine/v1/dai_engine_profile.pb.ts';
import { DAIEngineProfileServiceService } from '../gen/ai/h2o/engine/v1/dai_engine_profile_service.pb.ts';
import { H2OEngineProfileServiceService } from '../gen/ai/h2o/engine/v1/h2o_engine_profile_service.pb.ts';
import type { NotebookEngineProfile } from '../gen/ai/h2o/engine/v1/notebook_engine_profile.pb.ts';
import { NotebookEngineProfileServiceService } from '../gen/ai/h2o/engine/v1/notebook_engine_profile_service.pb.ts';
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
import { MESSAGE_KINDS, type MessageKind } from './message-kinds.ts';
import {
  created,
  parentWorkspace,
  ResourceService,
  standardOperations,
  type Page,
  type PageRequest,
  type Resource,
  type ServiceDeps,
  type StandardOperations,
} from './resource-service.ts';

type Profile = CommonProfile & Resource & { enabled: boolean };

/** The notebook profile's defaults for its git checkout. */
export const DEFAULT_GIT_REF = 'HEAD';
export const DEFAULT_GIT_DIRECTORY_NAME = 'Example';

/** What one profile kind adds to the common rules. */
interface ProfileKind<T extends Profile> {
  kind: MessageKind<T>;
  mask: MaskedResource;
  /** The numeric constraints the kind has, with their lowest allowed minimum. */
  numeric(profile: T): NumericRule[];
  /** Kind-specific defaults. */
  defaults(profile: T): T;
  /** Kind-specific violations. */
  violations(profile: T, prefix: string): FieldViolation[];
}

/** A profile kind's operations: the standard ones, and the assigned list and copy. */
interface ProfileOperations<T> extends StandardOperations<T> {
  listAssigned(request: PageRequest & { parent: string }, context: CallContext): Promise<Page<T>>;
  copy(request: { name: string; parent: string; id: string }, context: CallContext): Promise<T>;
}

function profileOperations<T extends Profile>(
  deps: ServiceDeps,
  profileKind: ProfileKind<T>,
): ProfileOperations<T> {
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
  return {
    ...standardOperations(service),

    // The profiles the caller may use to create engines: enabled, and assigned to one of the
    // caller's roles where role assignment is on.
    async listAssigned(request, context) {
      const workspace = parentWorkspace(request.parent);
      await service.authorize(context, 'LIST_ASSIGNED', workspace);
      const usable = (await service.all(workspace)).filter(
        (p) => p.enabled && isAssigned(p, context.caller.roles),
      );
      return service.page(usable, request, `assigned:parent=${request.parent}`);
    },

    // A new profile with the source's settings, in the same or another workspace.
    async copy(request, context) {
      const sourceWorkspace = service.workspaceOf(request.name);
      const targetWorkspace = parentWorkspace(request.parent);
      await service.authorize(context, 'GET', sourceWorkspace);
      await service.authorize(context, 'CREATE', targetWorkspace);
      const id = service.newId(request.id);
      const { message } = await service.get(request.name);
      return service.insert(created(message, service.nameIn(targetWorkspace, id), context.caller));
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
  const profiles = profileOperations(deps, {
    kind: MESSAGE_KINDS.DAIEngineProfile,
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
  return serviceHandlers(DAIEngineProfileServiceService, {
    createDaiEngineProfile: async (request, context) => ({
      daiEngineProfile: await profiles.create(
        { parent: request.parent, id: request.daiEngineProfileId, resource: request.daiEngineProfile },
        context,
      ),
    }),
    getDaiEngineProfile: async (request, context) => ({
      daiEngineProfile: await profiles.get(request.name, context),
    }),
    listDaiEngineProfiles: async (request, context) => {
      const { items, nextPageToken } = await profiles.list(request, context);
      return { daiEngineProfiles: items, nextPageToken };
    },
    updateDaiEngineProfile: async (request, context) => ({
      daiEngineProfile: await profiles.update(
        { resource: request.daiEngineProfile, updateMask: request.updateMask },
        context,
      ),
    }),
    deleteDaiEngineProfile: async (request, context) => {
      await profiles.delete(request.name, context);
      return {};
    },
    listAssignedDaiEngineProfiles: async (request, context) => {
      const { items, nextPageToken } = await profiles.listAssigned(request, context);
      return { daiEngineProfiles: items, nextPageToken };
    },
    copyDaiEngineProfile: async (request, context) => ({
      daiEngineProfile: await profiles.copy(
        { name: request.name, parent: request.parent, id: request.daiEngineProfileId },
        context,
      ),
    }),
  });
}

/** H2OEngineProfileService. */
export function h2oEngineProfileService(deps: ServiceDeps): Handlers {
  const profiles = profileOperations(deps, {
    kind: MESSAGE_KINDS.H2OEngineProfile,
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
  return serviceHandlers(H2OEngineProfileServiceService, {
    createH2OEngineProfile: async (request, context) => ({
      h2oEngineProfile: await profiles.create(
        { parent: request.parent, id: request.h2oEngineProfileId, resource: request.h2oEngineProfile },
        context,
      ),
    }),
    getH2OEngineProfile: async (request, context) => ({
      h2oEngineProfile: await profiles.get(request.name, context),
    }),
    listH2OEngineProfiles: async (request, context) => {
      const { items, nextPageToken } = await profiles.list(request, context);
      return { h2oEngineProfiles: items, nextPageToken };
    },
    updateH2OEngineProfile: async (request, context) => ({
      h2oEngineProfile: await profiles.update(
        { resource: request.h2oEngineProfile, updateMask: request.updateMask },
        context,
      ),
    }),
    deleteH2OEngineProfile: async (request, context) => {
      await profiles.delete(request.name, context);
      return {};
    },
    listAssignedH2OEngineProfiles: async (request, context) => {
      const { items, nextPageToken } = await profiles.listAssigned(request, context);
      return { h2oEngineProfiles: items, nextPageToken };
    },
    copyH2OEngineProfile: async (request, context) => ({
      h2oEngineProfile: await profiles.copy(
        { name: request.name, parent: request.parent, id: request.h2oEngineProfileId },
        context,
      ),
    }),
  });
}

/** NotebookEngineProfileService. */
export function notebookEngineProfileService(deps: ServiceDeps): Handlers {
  const profiles = profileOperations(deps, {
    kind: MESSAGE_KINDS.NotebookEngineProfile,
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
  return serviceHandlers(NotebookEngineProfileServiceService, {
    createNotebookEngineProfile: async (request, context) => ({
      notebookEngineProfile: await profiles.create(
        {
          parent: request.parent,
          id: request.notebookEngineProfileId,
          resource: request.notebookEngineProfile,
        },
        context,
      ),
    }),
    getNotebookEngineProfile: async (request, context) => ({
      notebookEngineProfile: await profiles.get(request.name, context),
    }),
    listNotebookEngineProfiles: async (request, context) => {
      const { items, nextPageToken } = await profiles.list(request, context);
      return { notebookEngineProfiles: items, nextPageToken };
    },
    updateNotebookEngineProfile: async (request, context) => ({
      notebookEngineProfile: await profiles.update(
        { resource: request.notebookEngineProfile, updateMask: request.updateMask },
        context,
      ),
    }),
    deleteNotebookEngineProfile: async (request, context) => {
      await profiles.delete(request.name, context);
      return {};
    },
    listAssignedNotebookEngineProfiles: async (request, context) => {
      const { items, nextPageToken } = await profiles.listAssigned(request, context);
      return { notebookEngineProfiles: items, nextPageToken };
    },
    copyNotebookEngineProfile: async (request, context) => ({
      notebookEngineProfile: await profiles.copy(
        { name: request.name, parent: request.parent, id: request.notebookEngineProfileId },
        context,
      ),
    }),
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
