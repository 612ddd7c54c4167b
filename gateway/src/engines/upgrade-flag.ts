/**
 * A DAI engine as reads show it, with whether a newer version is available (engines/upgrades.ts
 * decides it per read, from the versions as they are then). Engines as read may be shared (the
 * watch cache's, frozen): one whose stored flag already says so is answered as it is; one that
 * differs is answered as a copy, made once per engine and kept while the engine is cached.
 */

/** What this needs of an engine message. */
interface Flagged {
  upgradeAvailable: boolean;
}

/** Cached engines with the other flag than the one stored, by the engine they were copied from. */
const flagged = new WeakMap<object, object>();

/**
 * The engine with `upgradeAvailable` set. The copy keeps the engine's property descriptors, so
 * its running and idle durations stay live (getters, not the values of the moment of the copy),
 * and a frozen engine's copy is frozen and kept, so that its JSON text is kept too
 * (json/canonical-text.ts).
 */
export function withUpgradeAvailable<E extends Flagged>(engine: E, available: boolean): E {
  if (engine.upgradeAvailable === available) return engine;
  const known = flagged.get(engine) as E | undefined;
  if (known?.upgradeAvailable === available) return known;
  const descriptors = Object.getOwnPropertyDescriptors(engine);
  descriptors.upgradeAvailable = { value: available, enumerable: true, writable: true, configurable: true };
  const copy = Object.defineProperties({}, descriptors) as E;
  if (!Object.isFrozen(engine)) return copy;
  flagged.set(engine, Object.freeze(copy));
  return copy;
}
