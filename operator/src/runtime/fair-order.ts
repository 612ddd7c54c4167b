/**
 * The order in which waiting keys are served: groups (workspaces) take turns, one key each, and
 * within a group keys are served first come, first served. A workspace that creates thousands of
 * engines at once thus delays another workspace's engine by one key per busy workspace, not by
 * its whole backlog. Every operation takes constant time; the structure decides nothing else
 * (dedup, keys in flight and delays are the WorkQueue's).
 */

/** A first-in, first-out list with constant-time removal from the front. */
class Fifo<T> {
  private items: T[] = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.head += 1;
    // Drop the served front once it is most of the array, so memory follows what waits.
    if (this.head > 64 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
}

export class FairOrder {
  /** Each group's waiting keys, in arrival order; a group is here only while it has some. */
  private readonly waiting = new Map<string, Fifo<string>>();
  /** The groups with waiting keys, in the order they take their next turn. */
  private readonly turns = new Fifo<string>();
  private count = 0;

  /** Keys waiting, over all groups. */
  get size(): number {
    return this.count;
  }

  /** Adds `key` behind the keys its `group` has waiting; a group new to the order goes last in turn. */
  push(group: string, key: string): void {
    let keys = this.waiting.get(group);
    if (keys === undefined) {
      keys = new Fifo<string>();
      this.waiting.set(group, keys);
      this.turns.push(group);
    }
    keys.push(key);
    this.count += 1;
  }

  /** The oldest key of the group whose turn it is; that group's next turn comes after every other group's. */
  shift(): string | undefined {
    const group = this.turns.shift();
    if (group === undefined) return undefined;
    const keys = this.waiting.get(group);
    const key = keys?.shift();
    if (keys === undefined || key === undefined)
      throw new TypeError(`group "${group}" has a turn but no keys`);
    if (keys.size > 0) this.turns.push(group);
    else this.waiting.delete(group);
    this.count -= 1;
    return key;
  }
}
