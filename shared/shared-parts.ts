/** Sharing and freezing of equal parts of cached objects. */
/**
 * Freezes a cached value, so that code that changes what it read fails loudly instead of
 * changing what every later reader reads.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value) || value instanceof Date)
    return value;
  for (const child of Object.values(value)) deepFreeze(child);
  return Object.freeze(value);
}

/**
 * Keeps one copy of equal message parts: engines of one profile and version carry equal
 * snapshots of them, each several hundred bytes to kilobytes, and thousands of engines would
 * keep thousands of copies (the gateway's caches and the operator's copies both use it). The parts are frozen, so sharing them is safe; a part no message uses any more is
 * forgotten with its last user.
 */
export class SharedParts {
  private readonly parts = new Map<string, WeakRef<object>>();
  private readonly forget = new FinalizationRegistry<string>((key) => {
    if (this.parts.get(key)?.deref() === undefined) this.parts.delete(key);
  });

  /** The message with each object-valued field replaced by the shared equal copy, if any. */
  intern<T extends Record<string, unknown>>(message: T): T {
    const descriptors = Object.getOwnPropertyDescriptors(message);
    // Copied as they are: an engine message's durations are getters (gateway live-durations.ts).
    const out = Object.defineProperties({}, descriptors) as Record<string, unknown>;
    for (const [field, descriptor] of Object.entries(descriptors)) {
      const value: unknown = descriptor.value;
      if (typeof value !== 'object' || value === null || value instanceof Date) continue;
      const key = `${field}\u0000${JSON.stringify(value)}`;
      const known = this.parts.get(key)?.deref();
      if (known !== undefined) out[field] = known;
      else {
        const part = deepFreeze(value);
        this.parts.set(key, new WeakRef(part));
        this.forget.register(part, key);
      }
    }
    return out as T;
  }
}
