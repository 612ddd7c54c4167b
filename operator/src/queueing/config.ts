/**
 * The installation's queueing configuration: which engines wait in Kueue queues, the GPU classes
 * (one ResourceFlavor each) and each workspace's quota of GPUs per class. Read once at start from
 * the YAML file named by `AIEM_QUEUEING_CONFIG`; a file that does not say what it means stops the
 * operator with the key at fault, since a queue built from a guess would hold or admit the wrong
 * engines. Pure apart from reading the file.
 */
import { readFileSync } from 'node:fs';
import type { V1Toleration } from '@kubernetes/client-node';
import yaml from 'js-yaml';

/** Which engines wait in queues. */
export type QueuedEngines = 'gpu' | 'all';

/** A class of GPUs: a Kueue ResourceFlavor placing admitted engines on the nodes of that class. */
export interface GpuClass {
  /** The ResourceFlavor's name (a DNS label). */
  name: string;
  /** The labels of the nodes of the class: Kueue adds them to admitted engines' pods. */
  nodeLabels: Record<string, string>;
  /** Tolerations Kueue adds to admitted engines' pods. */
  tolerations: V1Toleration[];
}

/** GPUs per class name. */
export type GpuQuota = Readonly<Record<string, number>>;

export interface QueueingConfig {
  engines: QueuedEngines;
  /** In the order Kueue tries them for an engine. */
  gpuClasses: readonly GpuClass[];
  /** Each workspace's quota, unless listed in `workspaces`. */
  workspaceQuota: GpuQuota;
  /** Quotas of named workspaces (by workspace id). */
  workspaces: Readonly<Record<string, GpuQuota>>;
  /** The cohort all workspaces' queues share (they lend each other unused quota); empty: none. */
  cohort: string;
}

/** A configuration that does not say what it should; the message names the key. */
export class QueueingConfigError extends Error {
  constructor(message: string) {
    super(`Invalid queueing configuration: ${message}`);
    this.name = 'QueueingConfigError';
  }
}

/** The flavor of engines without GPUs: no node labels, no GPUs (see kueue-objects.ts). */
export const CPU_ONLY_FLAVOR = 'cpu-only';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const KEYS = ['engines', 'gpuClasses', 'workspaceQuota', 'workspaces', 'cohort'];
const CLASS_KEYS = ['name', 'nodeLabels', 'tolerations'];
const TOLERATION_KEYS = ['key', 'operator', 'value', 'effect', 'tolerationSeconds'];

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function fail(key: string, problem: string): never {
  throw new QueueingConfigError(`${key} ${problem}`);
}

function record(value: unknown, key: string): Json {
  if (value === undefined || value === null) return {};
  if (!isRecord(value)) fail(key, 'must be a mapping');
  return value;
}

function onlyKeys(value: Json, allowed: readonly string[], key: string): void {
  const unknown = Object.keys(value).find((k) => !allowed.includes(k));
  if (unknown !== undefined) fail(key === '' ? unknown : `${key}.${unknown}`, 'is not a known key');
}

function dnsLabel(value: unknown, key: string): string {
  if (typeof value !== 'string' || !DNS_LABEL.test(value))
    fail(key, `must be a DNS label (lower-case letters, digits and "-"), not ${JSON.stringify(value)}`);
  return value;
}

function strings(value: unknown, key: string): Record<string, string> {
  const entries = Object.entries(record(value, key));
  for (const [name, text] of entries)
    if (typeof text !== 'string') fail(`${key}.${name}`, `must be a string, not ${JSON.stringify(text)}`);
  return Object.fromEntries(entries) as Record<string, string>;
}

function tolerations(value: unknown, key: string): V1Toleration[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) fail(key, 'must be a list');
  return value.map((item: unknown, index) => {
    const at = `${key}[${index}]`;
    const toleration = record(item, at);
    onlyKeys(toleration, TOLERATION_KEYS, at);
    for (const [name, field] of Object.entries(toleration))
      if (name === 'tolerationSeconds' ? typeof field !== 'number' : typeof field !== 'string')
        fail(`${at}.${name}`, `has the wrong type: ${JSON.stringify(field)}`);
    return toleration;
  });
}

function gpuClasses(value: unknown): GpuClass[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) fail('gpuClasses', 'must be a list');
  const classes = value.map((item: unknown, index): GpuClass => {
    const at = `gpuClasses[${index}]`;
    const entry = record(item, at);
    onlyKeys(entry, CLASS_KEYS, at);
    const name = dnsLabel(entry['name'], `${at}.name`);
    if (name === CPU_ONLY_FLAVOR)
      fail(`${at}.name`, `"${CPU_ONLY_FLAVOR}" is reserved for engines without GPUs`);
    return {
      name,
      nodeLabels: strings(entry['nodeLabels'], `${at}.nodeLabels`),
      tolerations: tolerations(entry['tolerations'], `${at}.tolerations`),
    };
  });
  const names = classes.map((c) => c.name);
  const twice = names.find((name, index) => names.indexOf(name) !== index);
  if (twice !== undefined) fail('gpuClasses', `names "${twice}" twice`);
  return classes;
}

function quota(value: unknown, key: string, classes: readonly string[]): GpuQuota {
  const entries = Object.entries(record(value, key));
  for (const [name, gpus] of entries) {
    if (!classes.includes(name)) fail(`${key}.${name}`, 'is not a GPU class of gpuClasses');
    if (typeof gpus !== 'number' || !Number.isInteger(gpus) || gpus < 0)
      fail(`${key}.${name}`, `must be a whole number of GPUs (0 or more), not ${JSON.stringify(gpus)}`);
  }
  return Object.fromEntries(entries) as GpuQuota;
}

/**
 * The configuration a YAML text describes.
 *
 * @throws QueueingConfigError naming the key at fault
 */
export function parseQueueingConfig(text: string): QueueingConfig {
  let parsed: unknown;
  try {
    parsed = yaml.load(text);
  } catch (error: unknown) {
    throw new QueueingConfigError(`not YAML: ${error instanceof Error ? error.message : String(error)}`);
  }
  const root = record(parsed, 'the file');
  onlyKeys(root, KEYS, '');
  const engines = root['engines'] ?? 'gpu';
  if (engines !== 'gpu' && engines !== 'all')
    fail('engines', `must be "gpu" or "all", not ${JSON.stringify(engines)}`);
  const classes = gpuClasses(root['gpuClasses']);
  const names = classes.map((c) => c.name);
  const workspaces = Object.fromEntries(
    Object.entries(record(root['workspaces'], 'workspaces')).map(([id, gpus]) => [
      dnsLabel(id, `workspaces.${id}`),
      quota(gpus, `workspaces.${id}`, names),
    ]),
  );
  const cohort = root['cohort'] ?? '';
  return {
    engines,
    gpuClasses: classes,
    workspaceQuota: quota(root['workspaceQuota'], 'workspaceQuota', names),
    workspaces,
    cohort: cohort === '' ? '' : dnsLabel(cohort, 'cohort'),
  };
}

/**
 * The configuration in the file named by the environment variable's value; none (queueing off)
 * when it is unset or empty.
 *
 * @throws QueueingConfigError when the file cannot be read or says nothing valid
 */
export function readQueueingConfig(path: string | undefined): QueueingConfig | undefined {
  if (path === undefined || path === '') return undefined;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error: unknown) {
    throw new QueueingConfigError(
      `cannot read "${path}" (AIEM_QUEUEING_CONFIG): ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return parseQueueingConfig(text);
}

/** The GPUs per class the workspace may use at once. */
export function quotaOf(config: QueueingConfig, workspace: string): GpuQuota {
  return config.workspaces[workspace] ?? config.workspaceQuota;
}
