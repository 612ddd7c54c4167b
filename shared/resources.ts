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
  SandboxEngine: kind('SandboxEngine', 'sandboxEngines'),
  SandboxEngineImage: kind('SandboxEngineImage', 'sandboxEngineImages'),
  SandboxEngineTemplate: kind('SandboxEngineTemplate', 'sandboxEngineTemplates'),
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
  SandboxEngine: { terminated: 'The engine is wanted terminated: its pod stopped for good.' },
};

/**
 * The finalizer that holds an engine's deletion until the operator has cleaned up after it (its
 * pods, volumes, services). The API writes it with the engine, and the operator adds it to an
 * engine written without it.
 */
export const ENGINE_FINALIZER = `${GROUP}/cleanup`;

/**
 * Status fields the operator reports on engines beside the API message's own: which generation
 * of the spec it has acted on, when the current run became RUNNING, and Kubernetes-style
 * conditions (`Ready`, `Stopped`).
 */
export const ENGINE_OPERATOR_STATUS: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
  observedGeneration: {
    type: 'integer',
    format: 'int64',
    description: 'The generation of the spec that the operator last acted on.',
  },
  runningSince: {
    type: 'string',
    format: 'date-time',
    description:
      'When the current run of the engine (since its creation or latest resume) became RUNNING; the running and idle durations count from it, not from the time spent starting. Unset before the run has been RUNNING.',
  },
  conditions: {
    type: 'array',
    description:
      'The latest observations of the engine: Ready (serving), Stopped (paused or terminated, and why), Admitted (False while an engine written without admission is held).',
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['type'],
    items: {
      type: 'object',
      required: ['type', 'status'],
      properties: {
        type: { type: 'string' },
        status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
        reason: { type: 'string' },
        message: { type: 'string' },
        lastTransitionTime: { type: 'string', format: 'date-time' },
        observedGeneration: { type: 'integer', format: 'int64' },
      },
    },
  },
};

/**
 * Annotations on an engine resource through which activity reaches the operator. Engines (and the
 * API's notebook `:access`) write the time of the latest user activity; Driverless AI engines
 * write their disk usage as `{"totalBytes": "…", "freeBytes": "…"}`.
 */
export const LAST_ACTIVITY_ANNOTATION = `${GROUP}/last-activity-time`;
export const DISK_USAGE_ANNOTATION = `${GROUP}/disk-usage`;
/** How many processes run in a sandbox engine now, kept by the API: a busy sandbox is not idle. */
export const RUNNING_PROCESSES_ANNOTATION = `${GROUP}/running-processes`;
/** On a process or port: the id of the sandbox engine it belongs to. */
export const SANDBOX_ENGINE_LABEL = `${GROUP}/sandbox-engine`;

/**
 * Status fields a process keeps beside the API message's: its output, so that replicas of the
 * API that did not run it (or run after a restart) can serve it once it has ended.
 */
export const EXTRA_STATUS: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
  Process: {
    outputFrames: {
      type: 'array',
      description:
        'The output of an ended process as it was read, chunk by chunk, up to 256 KiB (the latest kept).',
      items: {
        type: 'object',
        properties: {
          stream: { type: 'string', enum: ['OUTPUT_STREAM_STDOUT', 'OUTPUT_STREAM_STDERR'] },
          data: { type: 'string', format: 'byte' },
        },
      },
    },
    outputTruncated: { type: 'boolean', description: 'Whether earlier output was left out of outputFrames.' },
  },
};

/** Why the operator stopped an engine itself (a duration limit), until the engine runs again. */
export const STOP_REASON_ANNOTATION = `${GROUP}/stop-reason`;

/** Labels on every object the operator makes for an engine: its uid and kind. */
export const ENGINE_UID_LABEL = `${GROUP}/engine-uid`;
export const ENGINE_KIND_LABEL = `${GROUP}/engine-kind`;
