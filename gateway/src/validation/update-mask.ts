import { invalidArgument, type ApiError } from '../errors/api-error.ts';

/**
 * The paths that an update may name, per resource, in snake_case as clients send them.
 * `*` alone means all of them. Paths are case sensitive.
 */
export const UPDATE_PATHS = {
  daiEngineProfile: [
    'display_name',
    'priority',
    'enabled',
    'assigned_oidc_roles_enabled',
    'assigned_oidc_roles',
    'max_running_engines',
    'cpu_constraint',
    'gpu_constraint',
    'memory_bytes_constraint',
    'storage_bytes_constraint',
    'max_idle_duration_constraint',
    'max_running_duration_constraint',
    'max_non_interaction_duration',
    'max_unused_duration',
    'configuration_override',
    'base_configuration',
    'config_editability',
    'yaml_pod_template_spec',
    'yaml_gpu_tolerations',
    'triton_enabled',
    'gpu_resource_name',
    'data_directory_storage_class',
    'queue_priority',
  ],
  h2oEngineProfile: [
    'display_name',
    'priority',
    'enabled',
    'assigned_oidc_roles_enabled',
    'assigned_oidc_roles',
    'max_running_engines',
    'node_count_constraint',
    'cpu_constraint',
    'gpu_constraint',
    'memory_bytes_constraint',
    'max_idle_duration_constraint',
    'max_running_duration_constraint',
    'yaml_pod_template_spec',
    'yaml_gpu_tolerations',
    'gpu_resource_name',
    'java_classpath',
    'java_options',
    'h2o_options',
    'queue_priority',
  ],
  notebookEngineProfile: [
    'display_name',
    'priority',
    'enabled',
    'assigned_oidc_roles_enabled',
    'assigned_oidc_roles',
    'max_running_engines',
    'cpu_constraint',
    'gpu_constraint',
    'memory_bytes_constraint',
    'storage_bytes_constraint',
    'max_idle_duration_constraint',
    'max_running_duration_constraint',
    'yaml_pod_template_spec',
    'yaml_gpu_tolerations',
    'storage_class_name',
    'gpu_resource_name',
    'sync_git_repository_enabled',
    'git_repository',
    'git_ref',
    'git_directory_name',
    'queue_priority',
  ],
  daiEngineVersion: ['deprecated', 'image', 'image_pull_policy', 'image_pull_secrets'],
  h2oEngineVersion: ['deprecated', 'image', 'image_pull_policy', 'image_pull_secrets'],
  notebookEngineImage: ['display_name', 'image', 'enabled', 'image_pull_policy', 'image_pull_secrets'],
  sandboxEngineImage: ['display_name', 'image', 'enabled', 'image_pull_policy', 'image_pull_secrets'],
  // Clients document storage_class_name too, but the template has no such field (only its
  // snapshot does); max_running_duration is missing from their list, yet 1.10 clients send it.
  sandboxEngineTemplate: [
    'display_name',
    'milli_cpu_request',
    'milli_cpu_limit',
    'gpu_resource',
    'gpu',
    'memory_bytes_request',
    'memory_bytes_limit',
    'storage_bytes',
    'environmental_variables',
    'yaml_pod_template_spec',
    'enabled',
    'max_idle_duration',
    'max_running_duration',
  ],
  port: ['display_name', 'public'],
  daiEngine: [
    'profile',
    'cpu',
    'gpu',
    'memory_bytes',
    'config',
    'annotations',
    'display_name',
    'max_idle_duration',
    'max_running_duration',
  ],
  h2oEngine: [
    'profile',
    'cpu',
    'gpu',
    'memory_bytes',
    'node_count',
    'annotations',
    'display_name',
    'max_idle_duration',
    'max_running_duration',
  ],
  notebookEngine: [
    'profile',
    'cpu',
    'gpu',
    'memory_bytes',
    'display_name',
    'max_idle_duration',
    'max_running_duration',
  ],
} as const satisfies Record<string, readonly string[]>;

export type MaskedResource = keyof typeof UPDATE_PATHS;

/** Fields fixed at creation; an update mask that names one is refused with that reason. */
export const IMMUTABLE_PATHS: Readonly<Partial<Record<MaskedResource, readonly string[]>>> = {
  h2oEngine: ['h2o_engine_version'],
  notebookEngine: ['notebook_image'],
};

/**
 * Allowed paths that `*` leaves out: an update changes them only when its mask names them. These
 * fields came after the official clients, whose updates send `*` by default with a body that
 * lacks them; with `*` covering them, any such update (a new display name, say) would quietly
 * reset them to their zero value.
 */
export const NAMED_ONLY_PATHS: Readonly<Partial<Record<MaskedResource, readonly string[]>>> = {
  daiEngineProfile: ['queue_priority'],
  h2oEngineProfile: ['queue_priority'],
  notebookEngineProfile: ['queue_priority'],
};

/**
 * The paths an update applies: for `*`, every allowed path but the named-only ones; else the
 * given ones, each checked.
 *
 * @returns the paths, or an INVALID_ARGUMENT naming `update_mask`
 */
export function resolveUpdateMask(
  resource: MaskedResource,
  mask: readonly string[] | undefined,
): string[] | ApiError {
  const allowed: readonly string[] = UPDATE_PATHS[resource];
  const paths = (mask ?? []).map((p) => p.trim()).filter((p) => p !== '');
  if (paths.length === 0)
    return invalidArgument('update_mask', 'is required and must name at least one field');
  if (paths.includes('*')) {
    if (paths.length > 1) return invalidArgument('update_mask', '"*" must be the only path');
    const namedOnly = NAMED_ONLY_PATHS[resource] ?? [];
    return allowed.filter((p) => !namedOnly.includes(p));
  }
  const immutable = paths.filter((p) => IMMUTABLE_PATHS[resource]?.includes(p));
  if (immutable.length > 0) {
    return invalidArgument(
      'update_mask',
      `${immutable.map((p) => `"${p}"`).join(', ')} cannot be changed after creation`,
    );
  }
  const unknown = paths.filter((p) => !allowed.includes(p));
  if (unknown.length > 0) {
    return invalidArgument(
      'update_mask',
      `unknown path ${unknown.map((p) => `"${p}"`).join(', ')}; allowed: ${allowed.join(', ')}`,
    );
  }
  return [...new Set(paths)];
}
