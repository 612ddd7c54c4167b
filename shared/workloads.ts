/**
 * Names of the Kubernetes workloads that run an engine, derived from the engine's object name
 * alone: the operator creates them under these names and the gateway finds a sandbox's pod by
 * the same rule, with no lookup.
 */
import { createHash } from 'node:crypto';

/** The StatefulSet (and Service) of an engine: a DNS label, whatever the object name holds. */
export function workloadName(prefix: string, objectName: string): string {
  return `${prefix}-${createHash('sha256').update(objectName).digest('hex').slice(0, 16)}`;
}

/** The workload prefix of sandbox engines. */
export const SANDBOX_PREFIX = 'sbx';
/** The container sandbox code runs in. */
export const SANDBOX_CONTAINER = 'sandbox';

/** The pod of a sandbox engine: the only pod of its StatefulSet. */
export function sandboxPodName(objectName: string): string {
  return `${workloadName(SANDBOX_PREFIX, objectName)}-0`;
}
