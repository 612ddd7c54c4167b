/**
 * The provider's storage, in memory, one store per provider. Unlike the library's quick-start
 * adapter (a bounded LRU shared by every provider of the process), nothing is evicted before it
 * expires, so the refresh tokens `make run` prints keep working however many tokens tests issue.
 */
import type { Adapter, AdapterFactory, AdapterPayload } from 'oidc-provider';

interface Entry {
  payload: AdapterPayload;
  /** Epoch milliseconds, or Infinity. */
  expiresAt: number;
}

/** An adapter factory whose models share one in-memory store. */
export function memoryAdapter(): AdapterFactory {
  const entries = new Map<string, Entry>();
  const live = (key: string): AdapterPayload | undefined => {
    const entry = entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt > Date.now()) return entry.payload;
    entries.delete(key);
    return undefined;
  };
  const findWhere = (model: string, test: (p: AdapterPayload) => boolean): AdapterPayload | undefined => {
    for (const key of entries.keys()) {
      const payload = key.startsWith(`${model}:`) ? live(key) : undefined;
      if (payload !== undefined && test(payload)) return payload;
    }
    return undefined;
  };

  return (model: string): Adapter => ({
    upsert: (id, payload, expiresIn) => {
      const expiresAt = expiresIn === undefined ? Infinity : Date.now() + expiresIn * 1000;
      entries.set(`${model}:${id}`, { payload, expiresAt });
      return Promise.resolve();
    },
    find: (id) => Promise.resolve(live(`${model}:${id}`)),
    findByUid: (uid) => Promise.resolve(findWhere(model, (p) => p.uid === uid)),
    findByUserCode: (userCode) => Promise.resolve(findWhere(model, (p) => p.userCode === userCode)),
    consume: (id) => {
      const payload = live(`${model}:${id}`);
      if (payload !== undefined) payload.consumed = Math.floor(Date.now() / 1000);
      return Promise.resolve();
    },
    destroy: (id) => {
      entries.delete(`${model}:${id}`);
      return Promise.resolve();
    },
    revokeByGrantId: (grantId) => {
      for (const [key, entry] of entries) if (entry.payload.grantId === grantId) entries.delete(key);
      return Promise.resolve();
    },
  });
}
