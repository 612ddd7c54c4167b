/**
 * Lists kept in order as objects change, so that a page costs work in proportion to the page,
 * not to the workspace: an {@link OrderedIndex} keeps, per group (a workspace, or a workspace
 * and one value of a field such as `state`), the objects sorted by one ordering; a page seeks
 * the place after its token by binary search and reads on from there.
 *
 * A group is a plain sorted array of references to the objects the cache already holds (8 bytes
 * an object per index, no copies, no stored keys): keys are computed again when compared, which
 * costs a binary search's ~14 key reads at 10,000 objects per change or page. An insert or a
 * removal moves the array's tail (a memmove of at most 80 KB at 10,000 objects, microseconds),
 * far below the rate of watch events; a B-tree would add a dependency for nothing measurable.
 */
import type { SortKey } from './ordering.ts';

/** How an index orders and groups objects. */
export interface IndexSpec<T> {
  /** Names the spec: two indexes of equal ids hold the same groups in the same order. */
  readonly id: string;
  /** The object's sort key; keys of distinct objects differ (a name ends every order). */
  key(item: T): SortKey;
  compare(a: SortKey, b: SortKey): number;
  /** The object's group; `undefined` keeps it out of every group. */
  group(item: T): string | undefined;
}

/** One group's objects in order, to read (not to change). */
export interface OrderedRun<T> {
  readonly size: number;
  at(index: number): T | undefined;
  /** The index of the first object whose key orders after `key`; `size` when none does. */
  after(key: SortKey): number;
}

/** The first index in `items` whose key is not before `key` (`strict`: is after it). */
function seek<T>(
  items: readonly T[],
  key: SortKey,
  spec: Pick<IndexSpec<T>, 'key' | 'compare'>,
  strict: boolean,
): number {
  let low = 0;
  let high = items.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    const order = spec.compare(spec.key(items[middle] as T), key);
    if (order < 0 || (strict && order === 0)) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** A sorted array of objects, in the order of `spec`. */
export class SortedRun<T> implements OrderedRun<T> {
  private readonly items: T[];
  private readonly spec: Pick<IndexSpec<T>, 'key' | 'compare'>;

  constructor(spec: Pick<IndexSpec<T>, 'key' | 'compare'>, items: T[] = []) {
    this.spec = spec;
    this.items = items;
  }

  /** Objects in any order, sorted once. */
  static of<T>(spec: Pick<IndexSpec<T>, 'key' | 'compare'>, items: Iterable<T>): SortedRun<T> {
    const keyed = Array.from(items, (item) => ({ item, key: spec.key(item) }));
    keyed.sort((a, b) => spec.compare(a.key, b.key));
    return new SortedRun(
      spec,
      keyed.map((k) => k.item),
    );
  }

  get size(): number {
    return this.items.length;
  }

  at(index: number): T | undefined {
    return this.items[index];
  }

  after(key: SortKey): number {
    return seek(this.items, key, this.spec, true);
  }

  insert(item: T): void {
    this.items.splice(seek(this.items, this.spec.key(item), this.spec, false), 0, item);
  }

  /** Removes that very object (found by its key, which it still has). */
  remove(item: T): void {
    const at = seek(this.items, this.spec.key(item), this.spec, false);
    // Keys are unique, so the object is here unless it never was.
    if (this.items[at] === item) this.items.splice(at, 1);
    else {
      const elsewhere = this.items.indexOf(item);
      if (elsewhere >= 0) this.items.splice(elsewhere, 1);
    }
  }
}

/** Groups of objects, each kept in order as objects are added, changed and removed. */
export class OrderedIndex<T> {
  readonly spec: IndexSpec<T>;
  private readonly groups = new Map<string, SortedRun<T>>();

  /** The index of `items` (the objects there are now). */
  constructor(spec: IndexSpec<T>, items: Iterable<T>) {
    this.spec = spec;
    const grouped = new Map<string, T[]>();
    for (const item of items) {
      const group = spec.group(item);
      if (group === undefined) continue;
      const members = grouped.get(group);
      if (members === undefined) grouped.set(group, [item]);
      else members.push(item);
    }
    for (const [group, members] of grouped) this.groups.set(group, SortedRun.of(spec, members));
  }

  /** One object changed: `before` is what the index holds of it, `after` what replaces it. */
  update(before: T | undefined, after: T | undefined): void {
    if (before !== undefined) {
      const group = this.spec.group(before);
      const run = group === undefined ? undefined : this.groups.get(group);
      if (group !== undefined && run !== undefined) {
        run.remove(before);
        // An emptied group is dropped, so that groups of gone workspaces cost nothing.
        if (run.size === 0) this.groups.delete(group);
      }
    }
    if (after === undefined) return;
    const group = this.spec.group(after);
    if (group === undefined) return;
    let run = this.groups.get(group);
    if (run === undefined) {
      run = new SortedRun(this.spec);
      this.groups.set(group, run);
    }
    run.insert(after);
  }

  /** The objects of a group in order; none when it has none. */
  group(group: string): OrderedRun<T> {
    return this.groups.get(group) ?? EMPTY_RUN;
  }
}

/** A run of nothing. */
export const EMPTY_RUN: OrderedRun<never> = { size: 0, at: () => undefined, after: () => 0 };

/** The run of `group` among `items` (in any order), sorted now: an index of one use. */
export function sortedRun<T>(items: Iterable<T>, spec: IndexSpec<T>, group: string): OrderedRun<T> {
  return SortedRun.of(
    spec,
    Array.from(items).filter((item) => spec.group(item) === group),
  );
}
