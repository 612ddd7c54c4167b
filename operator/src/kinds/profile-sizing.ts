/**
 * How engines sized by a profile get their pod's resources and customisation: cpu, gpu and
 * memoryBytes from the spec (which the API filled from the profile's defaults), the GPU resource
 * name, pod template and GPU tolerations from the profile's snapshot. Every kind but sandboxes
 * (sized by their template). Pure.
 */
import { decimalText, type EngineResource, type EngineSizing } from './kind.ts';

/** The kinds created from a profile. */
export type ProfiledKind = 'DAIEngine' | 'H2OEngine' | 'NotebookEngine';

/** Requests and limits from cpu, gpu (the profile's GPU resource) and memoryBytes. */
function profileResources(engine: EngineResource<ProfiledKind>): Record<string, Record<string, string>> {
  const amounts: Record<string, string> = {
    cpu: decimalText(engine.spec.cpu) ?? '1',
    memory: decimalText(engine.spec.memoryBytes) ?? String(1024 ** 3),
  };
  const gpu = engine.spec.gpu ?? 0;
  if (gpu > 0) amounts[engine.status?.profileInfo?.gpuResourceName || 'nvidia.com/gpu'] = String(gpu);
  return { requests: amounts, limits: amounts };
}

/** What the profile and spec give an engine's pod. */
export function profileSizing(engine: EngineResource<ProfiledKind>): EngineSizing {
  const profile = engine.status?.profileInfo;
  return {
    resources: profileResources(engine),
    gpu: engine.spec.gpu ?? 0,
    yamlPodTemplateSpec: profile?.yamlPodTemplateSpec ?? '',
    yamlGpuTolerations: profile?.yamlGpuTolerations ?? '',
    maxIdleDuration: engine.spec.maxIdleDuration,
    maxRunningDuration: engine.spec.maxRunningDuration,
  };
}
