/**
 * What an administrator defines so that engines run for real on the local cluster's real node:
 * an H2O version, a notebook image and a sandbox image of the engine images loaded there, and
 * profiles and a template whose pod template places engines on the real node (its label and
 * taint) with volumes of its StorageClass. As REST calls, made as an administrator by `make run`
 * and by the tests.
 */
import { dump } from 'js-yaml';
import type { EngineImage } from './engine-images.ts';
import { REAL_NODE } from './real-node.ts';

/** One create call of the REST API. */
export interface CatalogueEntry {
  /** The collection, e.g. `h2oEngineVersions`; `idParameter` names the id's query parameter. */
  collection: string;
  idParameter: string;
  id: string;
  body: Record<string, unknown>;
}

/** The id every entry of the real-node catalogue has: profiles, versions, images and the template. */
export const REAL_CATALOGUE_ID = 'real';

const GIB = 1024 ** 3;

const numeric = (min: string, def: string, max: string | null = null): Record<string, unknown> => ({
  min,
  default: def,
  max,
  cumulativeMax: null,
});

/** The pod template that puts an engine on the real node. */
export function realNodePlacement(): string {
  return dump({
    spec: {
      nodeSelector: { [REAL_NODE.label.key]: REAL_NODE.label.value },
      tolerations: [{ key: REAL_NODE.taint.key, operator: 'Exists', effect: REAL_NODE.taint.effect }],
    },
  });
}

function imageOf(images: readonly EngineImage[], kind: EngineImage['kind']): string {
  const image = images.find((i) => i.kind === kind);
  if (image === undefined) throw new Error(`No ${kind} engine image was built`);
  return image.ref;
}

/**
 * The real-node catalogue. Sizes fit a two-core machine: engines default to half a CPU's share
 * of one core and the memory their program needs.
 */
export function realCatalogue(images: readonly EngineImage[]): CatalogueEntry[] {
  const placement = realNodePlacement();
  const profile = {
    displayName: 'Real node (runs for real on this machine)',
    enabled: true,
    assignedOidcRolesEnabled: false,
    cpuConstraint: numeric('1', '1', '2'),
    gpuConstraint: numeric('0', '0', '0'),
    maxIdleDurationConstraint: { min: '0s', default: '3600s' },
    maxRunningDurationConstraint: { min: '0s', default: '14400s' },
    yamlPodTemplateSpec: placement,
  };
  return [
    {
      collection: 'h2oEngineVersions',
      idParameter: 'h2oEngineVersionId',
      id: versionId(imageOf(images, 'h2o')),
      body: {
        image: imageOf(images, 'h2o'),
        imagePullPolicy: 'IMAGE_PULL_POLICY_NEVER',
        aliases: [REAL_CATALOGUE_ID],
      },
    },
    {
      collection: 'h2oEngineProfiles',
      idParameter: 'h2oEngineProfileId',
      id: REAL_CATALOGUE_ID,
      body: {
        ...profile,
        nodeCountConstraint: numeric('1', '1', '2'),
        memoryBytesConstraint: numeric(String(GIB / 2), String(GIB), String(2 * GIB)),
      },
    },
    {
      collection: 'notebookEngineImages',
      idParameter: 'notebookEngineImageId',
      id: REAL_CATALOGUE_ID,
      body: {
        displayName: 'JupyterLab (real node)',
        image: imageOf(images, 'notebook'),
        imagePullPolicy: 'IMAGE_PULL_POLICY_NEVER',
        enabled: true,
      },
    },
    {
      collection: 'notebookEngineProfiles',
      idParameter: 'notebookEngineProfileId',
      id: REAL_CATALOGUE_ID,
      body: {
        ...profile,
        memoryBytesConstraint: numeric(String(GIB / 4), String(GIB / 2), String(2 * GIB)),
        storageBytesConstraint: numeric(String(GIB / 8), String(GIB / 4), String(4 * GIB)),
        storageClassName: REAL_NODE.storageClass,
      },
    },
    {
      collection: 'sandboxEngineImages',
      idParameter: 'sandboxEngineImageId',
      id: REAL_CATALOGUE_ID,
      body: {
        displayName: 'Python (real node)',
        image: imageOf(images, 'sandbox'),
        imagePullPolicy: 'IMAGE_PULL_POLICY_NEVER',
        enabled: true,
      },
    },
    {
      collection: 'sandboxEngineTemplates',
      idParameter: 'sandboxEngineTemplateId',
      id: REAL_CATALOGUE_ID,
      body: {
        displayName: 'Real node',
        memoryBytesLimit: String(GIB / 2),
        milliCpuLimit: 1000,
        storageBytes: String(GIB / 4),
        maxIdleDuration: '3600s',
        maxRunningDuration: '14400s',
        yamlPodTemplateSpec: placement,
        enabled: true,
      },
    },
  ];
}

/** A version id from an image tag: `…/h2o-engine:3.46.0.12` gives `3.46.0.12`. */
function versionId(ref: string): string {
  return ref.slice(ref.lastIndexOf(':') + 1);
}

/**
 * Creates every entry in `workspace` through the REST API as the holder of `token`; an entry that
 * already exists is left as it is.
 */
export async function createCatalogue(
  restUrl: string,
  token: string,
  entries: readonly CatalogueEntry[],
  workspace = 'global',
): Promise<void> {
  for (const entry of entries) {
    const url = `${restUrl}/v1/workspaces/${workspace}/${entry.collection}?${entry.idParameter}=${encodeURIComponent(entry.id)}`;
    const response = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(entry.body),
    });
    if (!response.ok && response.status !== 409) {
      throw new Error(
        `Creating ${entry.collection}/${entry.id} failed: ${response.status} ${await response.text()}`,
      );
    }
  }
}
