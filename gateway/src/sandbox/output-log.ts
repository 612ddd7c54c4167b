/**
 * The output of one process: one ordered log of chunks, each tagged with the stream it was read
 * from, exactly as the pipes delivered them. ReadOutput, ReadOutputFrames and StreamOutput are
 * views of it. The log is bounded: past its cap the oldest chunks go (ReadOutput then returns
 * the latest output, and says nothing of what went), so a chatty process cannot exhaust the
 * gateway's memory.
 */
import { OutputStream, type OutputFrame } from '../gen/ai/h2o/engine/v1/process.pb.ts';

/** Output kept per process while the API holds it in memory. */
export const MAX_OUTPUT_BYTES = 8 * 1024 * 1024;
/** Output kept with an ended process in its stored status, for other replicas. */
export const MAX_STORED_OUTPUT_BYTES = 256 * 1024;

export type Tag = typeof OutputStream.OUTPUT_STREAM_STDOUT | typeof OutputStream.OUTPUT_STREAM_STDERR;

export interface Chunk {
  stream: Tag;
  data: Buffer;
}

/** The chunks of `frames` whose total size is at most `limit` bytes, keeping the latest. */
export function latest(frames: readonly Chunk[], limit: number): { frames: Chunk[]; truncated: boolean } {
  let size = 0;
  let start = frames.length;
  while (start > 0) {
    const next = frames[start - 1];
    if (next === undefined || size + next.data.length > limit) break;
    size += next.data.length;
    start -= 1;
  }
  return { frames: frames.slice(start), truncated: start > 0 };
}

/** The bytes of one stream, or of both interleaved as they came (COMBINED; UNSPECIFIED reads stdout). */
export function selected(frames: readonly Chunk[], stream: OutputStream): Buffer {
  const wanted =
    stream === OutputStream.OUTPUT_STREAM_UNSPECIFIED ? OutputStream.OUTPUT_STREAM_STDOUT : stream;
  const chosen = frames.filter((f) => wanted === OutputStream.OUTPUT_STREAM_COMBINED || f.stream === wanted);
  return Buffer.concat(chosen.map((f) => f.data));
}

/** The chunks as API frames. */
export function asFrames(frames: readonly Chunk[]): OutputFrame[] {
  return frames.map((f) => ({ stream: f.stream, data: f.data }));
}

type Listener = (chunk: Chunk | 'end') => void;

/** A live log: appended to by the running process, read and followed by calls. */
export class OutputLog {
  private chunks: Chunk[] = [];
  private size = 0;
  private ended = false;
  private readonly listeners = new Set<Listener>();

  get done(): boolean {
    return this.ended;
  }

  get frames(): readonly Chunk[] {
    return this.chunks;
  }

  append(stream: Tag, data: Buffer): void {
    if (this.ended || data.length === 0) return;
    const chunk = { stream, data };
    this.chunks.push(chunk);
    this.size += data.length;
    if (this.size > MAX_OUTPUT_BYTES) {
      const kept = latest(this.chunks, MAX_OUTPUT_BYTES);
      this.chunks = kept.frames;
      this.size = this.chunks.reduce((sum, c) => sum + c.data.length, 0);
    }
    for (const listener of this.listeners) listener(chunk);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    for (const listener of this.listeners) listener('end');
    this.listeners.clear();
  }

  /**
   * The chunks so far (unless `skipReplay`), then each new one as it comes, until the log ends
   * or `signal` aborts.
   */
  async *follow(skipReplay: boolean, signal?: AbortSignal): AsyncGenerator<Chunk> {
    const queue: (Chunk | 'end')[] = skipReplay ? [] : [...this.chunks];
    if (this.ended) queue.push('end');
    let wake: (() => void) | undefined;
    const listener: Listener = (item) => {
      queue.push(item);
      wake?.();
    };
    const onAbort = (): void => wake?.();
    if (!this.ended) this.listeners.add(listener);
    signal?.addEventListener('abort', onAbort);
    try {
      while (signal?.aborted !== true) {
        const item = queue.shift();
        if (item === 'end') return;
        if (item !== undefined) yield item;
        else
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
      }
    } finally {
      this.listeners.delete(listener);
      signal?.removeEventListener('abort', onAbort);
    }
  }
}
