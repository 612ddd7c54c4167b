import { OutputStream } from '../gen/ai/h2o/engine/v1/process.pb.ts';
import { latest, MAX_OUTPUT_BYTES, OutputLog, selected, type Chunk } from './output-log.ts';

const OUT = OutputStream.OUTPUT_STREAM_STDOUT;
const ERR = OutputStream.OUTPUT_STREAM_STDERR;
const chunk = (stream: Chunk['stream'], text: string): Chunk => ({ stream, data: Buffer.from(text) });

describe('output views', () => {
  const frames = [chunk(OUT, 'a'), chunk(ERR, 'b'), chunk(OUT, 'c')];

  test.each([
    [OutputStream.OUTPUT_STREAM_COMBINED, 'abc'],
    [OutputStream.OUTPUT_STREAM_STDOUT, 'ac'],
    [OutputStream.OUTPUT_STREAM_STDERR, 'b'],
    // Unspecified reads stdout, as the clients document.
    [OutputStream.OUTPUT_STREAM_UNSPECIFIED, 'ac'],
  ])('selected(%p) is the concatenation of its chunks in order', (stream, text) => {
    expect(selected(frames, stream).toString()).toBe(text);
  });

  test('latest() keeps the newest chunks within the limit and says it left some out', () => {
    expect(latest(frames, 2)).toEqual({ frames: frames.slice(1), truncated: true });
    expect(latest(frames, 3)).toEqual({ frames, truncated: false });
  });
});

describe('OutputLog', () => {
  test('follow() replays what there is, then tails new chunks until the end', async () => {
    const log = new OutputLog();
    log.append(OUT, Buffer.from('first'));
    const seen: string[] = [];
    const following = (async () => {
      for await (const c of log.follow(false)) seen.push(c.data.toString());
    })();
    log.append(ERR, Buffer.from('second'));
    log.end();
    await following;
    expect(seen).toEqual(['first', 'second']);
  });

  test('follow(skipReplay) sends only what comes after it began', async () => {
    const log = new OutputLog();
    log.append(OUT, Buffer.from('before'));
    const seen: string[] = [];
    const following = (async () => {
      for await (const c of log.follow(true)) seen.push(c.data.toString());
    })();
    log.append(OUT, Buffer.from('after'));
    log.end();
    await following;
    expect(seen).toEqual(['after']);
  });

  test('follow() ends when its signal aborts, though the log goes on', async () => {
    const log = new OutputLog();
    const stop = new AbortController();
    const following = (async () => {
      const seen: string[] = [];
      for await (const c of log.follow(false, stop.signal)) seen.push(c.data.toString());
      return seen;
    })();
    log.append(OUT, Buffer.from('x'));
    await new Promise((resolve) => setImmediate(resolve));
    stop.abort();
    expect(await following).toEqual(['x']);
    expect(log.done).toBe(false);
  });

  test('keeps at most MAX_OUTPUT_BYTES, dropping the oldest chunks', () => {
    const log = new OutputLog();
    const mib = Buffer.alloc(1024 * 1024, 1);
    for (let i = 0; i < 10; i++) log.append(OUT, mib);
    const kept = log.frames.reduce((sum, c) => sum + c.data.length, 0);
    expect(kept).toBeLessThanOrEqual(MAX_OUTPUT_BYTES);
    expect(kept).toBeGreaterThan(MAX_OUTPUT_BYTES - mib.length);
  });
});
