/**
 * Processes as custom resources (kind Process), one per process, owned by their sandbox engine's
 * resource so that they go with it. The object is `<engine object>.<process id>` (engine object
 * names hold one dot and ids none, so the name is unique per engine and process); its labels
 * carry the workspace, engine and process ids exactly, and every read checks them. What the
 * caller asked for is the spec; state, times, exit code and, once ended, the output are the
 * status, written by the replica that runs the process.
 */
import { CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import {
  API_VERSION,
  GROUP,
  ID_LABEL,
  SANDBOX_ENGINE_LABEL,
  VERSION,
  WORKSPACE_LABEL,
} from '../../../shared/resources.ts';
import { statusCode } from '../../../shared/watched-collection.ts';
import { ApiError, notFound } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import { OutputStream, type Process } from '../gen/ai/h2o/engine/v1/process.pb.ts';
import { fromJson, toJson, type Json } from '../json/canonical.ts';
import { MESSAGES } from '../gen/messages.ts';
import { objectName } from '../store/names.ts';
import type { Chunk, Tag } from './output-log.ts';

const MESSAGE = 'ai.h2o.engine.v1.Process';
const PLURAL = 'processes';
const NAME = /^workspaces\/([^/]+)\/sandboxEngines\/([^/]+)\/processes\/([^/]+)$/;

/** A process name's parts. */
export interface ProcessName {
  workspace: string;
  engine: string;
  id: string;
}

export function parseProcessName(name: string): ProcessName | undefined {
  const match = NAME.exec(name);
  if (match === null) return undefined;
  return { workspace: match[1] ?? '', engine: match[2] ?? '', id: match[3] ?? '' };
}

/** The name of the engine a process runs in. */
export function engineName(parts: Pick<ProcessName, 'workspace' | 'engine'>): string {
  return `workspaces/${parts.workspace}/sandboxEngines/${parts.engine}`;
}

export function processName(parts: ProcessName): string {
  return `${engineName(parts)}/processes/${parts.id}`;
}

/** A stored process with the output it was stored with. */
export interface StoredProcess {
  process: Process;
  output: { frames: Chunk[]; truncated: boolean };
}

/** The engine a process belongs to, as its owner reference needs it. */
export interface OwnerEngine {
  objectName: string;
  uid: string;
}

interface ProcessObject {
  metadata: {
    name: string;
    labels?: Record<string, string>;
    uid?: string;
    creationTimestamp?: string | Date;
  };
  spec?: Record<string, Json>;
  status?: Record<string, Json> & {
    outputFrames?: { stream?: string; data?: string }[];
    outputTruncated?: boolean;
  };
}

/** The status fields a report sets. */
export interface ProcessReport {
  state: string;
  startTime?: string;
  endTime?: string;
  exitCode?: number;
  output?: { frames: readonly Chunk[]; truncated: boolean };
}

const OUTPUT_FIELDS = new Set((MESSAGES[MESSAGE] ?? []).filter((f) => f.output).map((f) => f.json));

function timeText(value: string | Date | undefined): string | undefined {
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value : value.toISOString();
}

const TAGS: Readonly<Record<string, Tag>> = {
  OUTPUT_STREAM_STDOUT: OutputStream.OUTPUT_STREAM_STDOUT,
  OUTPUT_STREAM_STDERR: OutputStream.OUTPUT_STREAM_STDERR,
};

function storedOutput(object: ProcessObject): StoredProcess['output'] {
  const frames = (object.status?.outputFrames ?? []).flatMap((f) => {
    const stream = TAGS[f.stream ?? ''];
    return stream === undefined ? [] : [{ stream, data: Buffer.from(f.data ?? '', 'base64') }];
  });
  return { frames, truncated: object.status?.outputTruncated === true };
}

/** The API message of a stored object, or `undefined` when its labels do not name `expected`. */
function fromObject(object: ProcessObject, expected?: ProcessName): StoredProcess | undefined {
  const labels = object.metadata.labels ?? {};
  const parts = {
    workspace: labels[WORKSPACE_LABEL] ?? '',
    engine: labels[SANDBOX_ENGINE_LABEL] ?? '',
    id: labels[ID_LABEL] ?? '',
  };
  if (expected && processName(expected) !== processName(parts)) return undefined;
  const status = Object.fromEntries(
    Object.entries(object.status ?? {}).filter(([key]) => OUTPUT_FIELDS.has(key)),
  );
  const created = timeText(object.metadata.creationTimestamp);
  const json: Record<string, Json> = {
    ...object.spec,
    state: 'STATE_PENDING',
    ...status,
    name: processName(parts),
    ...(created === undefined ? {} : { createTime: created }),
  };
  return { process: processOf(json), output: storedOutput(object) };
}

/** The Process of its JSON, read by the Process message's field table: it has that message's fields. */
function processOf(json: Record<string, Json>): Process {
  const message: object = fromJson(MESSAGE, json);
  return message as Process;
}

/** Processes of sandbox engines, stored in `namespace`. */
export class ProcessStore {
  private readonly api: CustomObjectsApi;
  private readonly namespace: string;

  constructor(kubeConfig: KubeConfig, namespace: string) {
    this.api = kubeConfig.makeApiClient(CustomObjectsApi);
    this.namespace = namespace;
  }

  /** The object name of a process; `undefined` when no object can hold it. */
  static objectName(parts: ProcessName): string | undefined {
    const engine = objectName(parts.workspace, parts.engine);
    const name = engine === undefined ? undefined : `${engine}.${parts.id}`;
    return name !== undefined && name.length <= 253 ? name : undefined;
  }

  private target(): { group: string; version: string; namespace: string; plural: string } {
    return { group: GROUP, version: VERSION, namespace: this.namespace, plural: PLURAL };
  }

  /** Stores a new process (PENDING); ALREADY_EXISTS when the engine has one of that id. */
  async create(process: Process, owner: OwnerEngine): Promise<Process> {
    const parts = parseProcessName(process.name);
    const name = parts && ProcessStore.objectName(parts);
    if (parts === undefined || name === undefined) throw new TypeError(`"${process.name}" cannot be stored`);
    const json = toJson(MESSAGE, process);
    const spec = Object.fromEntries(
      Object.entries(json).filter(([key]) => !OUTPUT_FIELDS.has(key) && key !== 'name'),
    );
    const body = {
      apiVersion: API_VERSION,
      kind: 'Process',
      metadata: {
        name,
        labels: {
          [WORKSPACE_LABEL]: parts.workspace,
          [SANDBOX_ENGINE_LABEL]: parts.engine,
          [ID_LABEL]: parts.id,
        },
        ownerReferences: [
          { apiVersion: API_VERSION, kind: 'SandboxEngine', name: owner.objectName, uid: owner.uid },
        ],
      },
      spec,
    };
    try {
      const created = (await this.api.createNamespacedCustomObject({
        ...this.target(),
        body,
      })) as ProcessObject;
      return (fromObject(created) as StoredProcess).process;
    } catch (error: unknown) {
      if (statusCode(error) === 409)
        throw new ApiError(Code.ALREADY_EXISTS, `The process "${process.name}" already exists`, {
          reason: 'ALREADY_EXISTS',
        });
      throw error;
    }
  }

  /** The process of `name`; NOT_FOUND when there is none. */
  async get(name: string): Promise<StoredProcess> {
    const parts = parseProcessName(name);
    const object = parts && ProcessStore.objectName(parts);
    if (parts === undefined || object === undefined) throw notFound(name);
    try {
      const found = (await this.api.getNamespacedCustomObject({
        ...this.target(),
        name: object,
      })) as ProcessObject;
      const stored = fromObject(found, parts);
      if (stored === undefined) throw notFound(name);
      return stored;
    } catch (error: unknown) {
      if (statusCode(error) === 404) throw notFound(name);
      throw error;
    }
  }

  /** The processes of one engine, oldest first. */
  async list(workspace: string, engine: string): Promise<Process[]> {
    const found = (await this.api.listNamespacedCustomObject({
      ...this.target(),
      labelSelector: `${WORKSPACE_LABEL}=${workspace},${SANDBOX_ENGINE_LABEL}=${engine}`,
    })) as { items: ProcessObject[] };
    return found.items
      .flatMap((object) => fromObject(object)?.process ?? [])
      .sort(
        (a, b) =>
          (a.createTime?.getTime() ?? 0) - (b.createTime?.getTime() ?? 0) || a.name.localeCompare(b.name),
      );
  }

  /** Every process of every engine. */
  async listAll(): Promise<Process[]> {
    const found = (await this.api.listNamespacedCustomObject({ ...this.target() })) as {
      items: ProcessObject[];
    };
    return found.items.flatMap((object) => fromObject(object)?.process ?? []);
  }

  /** Records what the process did (a merge of the status). */
  async report(name: string, report: ProcessReport): Promise<void> {
    const parts = parseProcessName(name);
    const object = parts && ProcessStore.objectName(parts);
    if (object === undefined) throw notFound(name);
    const { output, ...fields } = report;
    const status: Record<string, unknown> = { ...fields };
    if (output !== undefined) {
      status['outputFrames'] = output.frames.map((f) => ({
        stream:
          f.stream === OutputStream.OUTPUT_STREAM_STDERR ? 'OUTPUT_STREAM_STDERR' : 'OUTPUT_STREAM_STDOUT',
        data: f.data.toString('base64'),
      }));
      status['outputTruncated'] = output.truncated;
    }
    await this.api.patchNamespacedCustomObjectStatus(
      { ...this.target(), name: object, body: { status } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }
}
