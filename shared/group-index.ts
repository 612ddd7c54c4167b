/**
 * Objects of a watched collection grouped by a key (the gateway's caches by workspace, the
 * operator's copies by engine uid), kept up to date from the collection's changes: a group
 * emptied by a change is dropped.
 */
export class GroupIndex<T> {
  private readonly groups = new Map<string, Map<string, T>>();

  /** Moves the object `name` from the group of `before` to that of `after` (by `keyOf`). */
  update(
    name: string,
    before: T | undefined,
    after: T | undefined,
    keyOf: (object: T) => string | undefined,
  ): void {
    const previous = before === undefined ? undefined : keyOf(before);
    if (previous !== undefined) {
      const group = this.groups.get(previous);
      group?.delete(name);
      if (group?.size === 0) this.groups.delete(previous);
    }
    const key = after === undefined ? undefined : keyOf(after);
    if (key === undefined || after === undefined) return;
    let group = this.groups.get(key);
    if (group === undefined) {
      group = new Map();
      this.groups.set(key, group);
    }
    group.set(name, after);
  }

  /** The objects of a group; none when there are none. */
  of(key: string): Iterable<T> {
    return this.groups.get(key)?.values() ?? [];
  }
}
