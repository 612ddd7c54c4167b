/**
 * Runs tasks one at a time per key, in arrival order; tasks of different keys run concurrently.
 * Guards read-decide-write sequences that span several objects (alias reassignment) within one
 * gateway process.
 */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<unknown>>();

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(task, task);
    const tail = result.catch(() => undefined);
    this.tails.set(key, tail);
    try {
      return await result;
    } finally {
      // The last task of a key removes it, so that idle keys hold no memory.
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
