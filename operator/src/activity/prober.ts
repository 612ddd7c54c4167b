/**
 * Runs a kind's activity probe against the engine's pod: the pod that serves the engine (ready,
 * not being deleted — for H2O the cloud's leader, the only node that answers clients), reached at
 * its pod IP and the kind's port, as the operator's own copy of the pods has them; the paths
 * under the engine's address path, which is where the engines serve (Jupyter's `base_url`, H2O's
 * `-context_path`). A pod on a simulated node has an address nothing serves: its probe fails within
 * the connect timeout, and the engine idles out as it would without probes.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { enginePath, type EngineKind, type EngineResource, type Settings } from '../kinds/kind.ts';
import type { ActivityProbe } from './activity-probe.ts';
import { getJson, PROBE_LIMITS, ProbeFailure, type JsonGetLimits } from './http-json.ts';

/** What a probe is asked about: one engine, its kind's probe, and its pods as last seen. */
export interface ProbeRequest {
  kind: EngineKind;
  probe: ActivityProbe;
  engine: EngineResource;
  pods: readonly V1Pod[];
  settings: Settings;
  now: Date;
}

/** What a probe found: when the engine was last active (if its answers show it), or why it could not tell. */
export type ProbeOutcome = { found: Date | undefined } | { failure: string };

/** Asks an engine when it was last active. Never throws: a failure is an outcome. */
export type ActivityProber = (request: ProbeRequest) => Promise<ProbeOutcome>;

/** Where a pod's server answers. */
export interface Address {
  host: string;
  port: number;
}

export interface HttpProberOptions {
  log: Logger;
  limits?: JsonGetLimits;
  /** Where to reach the serving pod; its pod IP and the kind's port unless told otherwise (tests). */
  address?: (pod: V1Pod, port: number) => Address | undefined;
}

const isReady = (pod: V1Pod): boolean =>
  pod.metadata?.deletionTimestamp === undefined &&
  (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

/** The pod's IP and `port`, when it has an IP. */
export function podAddress(pod: V1Pod, port: number): Address | undefined {
  const ip = pod.status?.podIP;
  return ip === undefined || ip === '' ? undefined : { host: ip, port };
}

/** The serving pod's address: the first ready pod with one. */
export function servingAddress(
  pods: readonly V1Pod[],
  port: number,
  address: (pod: V1Pod, port: number) => Address | undefined = podAddress,
): Address | undefined {
  for (const pod of pods.filter(isReady)) {
    const found = address(pod, port);
    if (found !== undefined) return found;
  }
  return undefined;
}

function urlOf(address: Address, path: string): string {
  const host = address.host.includes(':') ? `[${address.host}]` : address.host;
  return `http://${host}:${address.port}${path}`;
}

/** What is asked of an engine's serving pod: a GET under the engine's path. */
export interface EngineQuestion {
  kind: EngineKind;
  engine: EngineResource;
  pods: readonly V1Pod[];
  settings: Settings;
  paths: readonly string[];
}

/**
 * The parsed answers, in the order of the paths, or why there are none; `refusedWith` is the
 * HTTP status when the engine answered but refused.
 */
export type EngineAnswers = { answers: readonly unknown[] } | { failure: string; refusedWith?: number };

/** GETs paths of an engine's serving pod. Never throws: a failure is an outcome. */
export type EngineAsker = (question: EngineQuestion) => Promise<EngineAnswers>;

async function askServingPod(question: EngineQuestion, options: HttpProberOptions): Promise<EngineAnswers> {
  const { kind, engine, pods, settings, paths } = question;
  const target = kind.port === undefined ? undefined : servingAddress(pods, kind.port, options.address);
  if (target === undefined) return { failure: 'no ready pod with an address' };
  const base = enginePath(kind, engine, settings);
  const limits = options.limits ?? PROBE_LIMITS;
  try {
    return {
      answers: await Promise.all(paths.map((path) => getJson(urlOf(target, `${base}${path}`), limits))),
    };
  } catch (error: unknown) {
    if (error instanceof ProbeFailure && error.status !== undefined)
      return { failure: error.message, refusedWith: error.status };
    return { failure: error instanceof Error ? error.message : String(error) };
  }
}

/** The operator's way to ask engines: HTTP GETs to the serving pod. */
export function httpEngineAsker(options: HttpProberOptions): EngineAsker {
  return (question) => askServingPod(question, options);
}

async function ask(request: ProbeRequest, options: HttpProberOptions): Promise<ProbeOutcome> {
  const { probe, now } = request;
  const outcome = await askServingPod({ ...request, paths: probe.paths }, options);
  if ('failure' in outcome) return { failure: outcome.failure };
  try {
    return { found: probe.latestActivity(outcome.answers, now) };
  } catch (error: unknown) {
    return { failure: error instanceof Error ? error.message : String(error) };
  }
}

/** The prober of the operator: HTTP GETs to the serving pod, each outcome logged. */
export function httpActivityProber(options: HttpProberOptions): ActivityProber {
  return async (request) => {
    const outcome = await ask(request, options);
    const fields = { engine: request.engine.metadata.name, kind: request.kind.kind };
    if ('failure' in outcome)
      options.log.info({ ...fields, reason: outcome.failure }, 'Failed to probe engine activity');
    else options.log.debug({ ...fields, found: outcome.found?.toISOString() }, 'Probed engine activity');
    return outcome;
  };
}
