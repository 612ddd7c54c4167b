/**
 * How API resources are stored as Kubernetes custom resources: the group, the labels, and each
 * kind's collection. The CRD generator, the gateway and the operator all read these.
 */

/** The API group of every custom resource (mirrors the protobuf package ai.h2o.engine.v1). */
export const GROUP = 'engine.h2o.ai';
export const VERSION = 'v1';
export const API_VERSION = `${GROUP}/${VERSION}`;
/** `kubectl get aiem` lists every kind. */
export const CATEGORY = 'aiem';
/** Labels that carry the API name of a custom resource, exactly. */
export const WORKSPACE_LABEL = `${GROUP}/workspace`;
export const ID_LABEL = `${GROUP}/id`;

/** One stored resource kind. */
export interface ResourceKind {
  kind: string;
  /** The Kubernetes plural, e.g. `daiengines`. */
  plural: string;
  /** The collection in API names, e.g. `daiEngines` in `workspaces/w/daiEngines/e1`. */
  collection: string;
  /** The protobuf message. */
  message: string;
}

function kind(name: string, collection: string): ResourceKind {
  return { kind: name, plural: `${name.toLowerCase()}s`, collection, message: `ai.h2o.engine.v1.${name}` };
}

export const RESOURCE_KINDS = {
  DAIEngine: kind('DAIEngine', 'daiEngines'),
  H2OEngine: kind('H2OEngine', 'h2oEngines'),
  NotebookEngine: kind('NotebookEngine', 'notebookEngines'),
  DAIEngineProfile: kind('DAIEngineProfile', 'daiEngineProfiles'),
  H2OEngineProfile: kind('H2OEngineProfile', 'h2oEngineProfiles'),
  NotebookEngineProfile: kind('NotebookEngineProfile', 'notebookEngineProfiles'),
  DAIEngineVersion: kind('DAIEngineVersion', 'daiEngineVersions'),
  H2OEngineVersion: kind('H2OEngineVersion', 'h2oEngineVersions'),
  NotebookEngineImage: kind('NotebookEngineImage', 'notebookEngineImages'),
} as const satisfies Record<string, ResourceKind>;

/** API fields that a custom resource keeps in its metadata rather than in spec or status. */
export const FROM_METADATA: ReadonlySet<string> = new Set(['name', 'uid', 'create_time', 'delete_time']);

/**
 * What the API records in an engine's spec for the operator to act on, beside the API message's
 * own fields: the wanted lifecycle, which the state (reported in status) follows.
 */
export const ENGINE_INTENT: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  DAIEngine: { paused: 'The engine is wanted paused: its pods stopped, its storage kept.' },
  NotebookEngine: { paused: 'The engine is wanted paused: its pods stopped, its storage kept.' },
  H2OEngine: { terminated: 'The engine is wanted terminated: its pods stopped for good.' },
};
