/**
 * One pooled, keep-alive connection pool per KubeConfig. @kubernetes/client-node 2.x builds a
 * new undici Agent for every request (in `createDispatcher`, called from
 * `applySecurityAuthentication`), so each call to the apiserver opened a fresh TLS connection —
 * a handshake per call, and an idle socket left behind. Here the KubeConfig's dispatcher is made
 * once per distinct TLS and proxy setting and reused by every client made from it: API calls,
 * watches and informers alike.
 */
import { createHash } from 'node:crypto';
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
  const dispatchers = new Map<string, unknown>();
  const memoized: CreateDispatcher = (cluster, agentOptions) => {
    // The key is everything the dispatcher is made of (server, CA, client certificate, proxy),
    // so rotated credentials get a pool of their own.
    const options = kubeConfig.createDispatcherOptions(
      cluster as Parameters<KubeConfig['createDispatcherOptions']>[0],
      agentOptions,
    );
    const key = createHash('sha256')
      .update(JSON.stringify([(cluster as { server?: string } | null)?.server, options]))
      .digest('hex');
    if (!dispatchers.has(key)) {
      dispatchers.set(key, Reflect.apply(create, kubeConfig, [cluster, agentOptions]));
    }
    return dispatchers.get(key);
  };
  Reflect.set(kubeConfig, 'createDispatcher', memoized);
  return kubeConfig;
}

const POOLED = new WeakSet<KubeConfig>();
