/**
 * One pooled, keep-alive connection pool per KubeConfig. @kubernetes/client-node 2.x builds a
 * new undici Agent for every request (in `createDispatcher`, called from
 * `applySecurityAuthentication`), so each call to the apiserver opened a fresh TLS connection —
 * a handshake per call, and an idle socket left behind. Here the KubeConfig's dispatcher is made
 * once per distinct TLS and proxy setting and reused by every client made from it: API calls,
 * watches and informers alike.
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeConfig } from '@kubernetes/client-node';

/** What createDispatcher takes: the cluster and the TLS options of the current user. */
type CreateDispatcher = (cluster: unknown, agentOptions: object) => unknown;

/** Pools `kubeConfig`'s connections (in place) and returns it. Idempotent. */
export function pooled(kubeConfig: KubeConfig): KubeConfig {
  const create: unknown = Reflect.get(kubeConfig, 'createDispatcher');
  if (typeof create !== 'function') {
    throw new Error('@kubernetes/client-node no longer creates dispatchers with createDispatcher');
  }
  if (POOLED.has(kubeConfig)) return kubeConfig;
  POOLED.add(kubeConfig);
  const dispatchers: { server: unknown; options: unknown; dispatcher: unknown }[] = [];
  const memoized: CreateDispatcher = (cluster, agentOptions) => {
    // A dispatcher is made of the server, CA, client certificate and proxy, so rotated
    // credentials get a pool of their own. They are compared as they are, bytes for bytes: the
    // client reads them afresh for every call, and hashing them as JSON (a number per byte) cost
    // more than the call's own work.
    const options = kubeConfig.createDispatcherOptions(
      cluster as Parameters<KubeConfig['createDispatcherOptions']>[0],
      agentOptions,
    );
    const server = (cluster as { server?: string } | null)?.server;
    const known = dispatchers.find((d) => d.server === server && isDeepStrictEqual(d.options, options));
    if (known !== undefined) return known.dispatcher;
    const dispatcher: unknown = Reflect.apply(create, kubeConfig, [cluster, agentOptions]);
    dispatchers.push({ server, options, dispatcher });
    return dispatcher;
  };
  Reflect.set(kubeConfig, 'createDispatcher', memoized);
  return kubeConfig;
}

const POOLED = new WeakSet<KubeConfig>();
