/**
 * `make run` stops as a terminal user expects, also under load: Ctrl+C (SIGINT to the whole
 * foreground process group) stops everything within seconds and leaves no process and no file
 * behind; a second Ctrl+C stops at once. Its admission webhooks check kubectl's writes.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, openSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { StackInfo } from '../../scripts/run.ts';
import { freePort } from '../cluster/ports.ts';
import { waitFor } from '../cluster/wait.ts';
import { profile } from '../auth/catalogue.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const ENGINES = 400;
const RUNNING_AT_LEAST = 100;

/** A `make run` in its own process group, as a shell runs a foreground job. */
interface Stack {
  child: ChildProcess;
  exited: Promise<{ code: number | null; at: number }>;
  info: StackInfo;
  runDir: string;
  output: () => string;
}

async function startStack(): Promise<Stack> {
  const runDir = mkdtempSync(join(tmpdir(), 'aiem-make-run-'));
  const logPath = join(runDir, 'output.log');
  const out = openSync(logPath, 'w');
  const env = {
    ...process.env,
    AIEM_RUN_DIR: runDir,
    AIEM_REST_PORT: String(await freePort()),
    AIEM_GRPC_PORT: String(await freePort()),
    AIEM_DOCS_PORT: String(await freePort()),
    AIEM_IDENTITY_PORT: String(await freePort()),
    AIEM_WEBHOOK_PORT: String(await freePort()),
    AIEM_LOG_LEVEL: 'warn',
    // 10 × 16 CPUs: room for a hundred and more running engines.
    AIEM_CPU_NODES: '10',
  };
  const child = spawn(process.execPath, [join(ROOT, 'scripts', 'run.ts')], {
    cwd: ROOT,
    env,
    detached: true,
    stdio: ['ignore', out, out],
  });
  const exited = new Promise<{ code: number | null; at: number }>((done) => {
    child.once('exit', (code) => {
      done({ code, at: Date.now() });
    });
  });
  const output = (): string => readFileSync(logPath, 'utf8');
  const stackFile = join(runDir, 'stack.json');
  const info = await waitFor(
    () =>
      Promise.resolve(
        existsSync(stackFile) ? (JSON.parse(readFileSync(stackFile, 'utf8')) as StackInfo) : undefined,
      ),
    { what: 'make run to start', timeoutMs: 180_000, intervalMs: 250, explain: output },
  );
  return { child, exited, info, runDir, output };
}

/** Processes whose command line names `text` (the cluster's run folder), with the supervisor. */
function processesOf(stack: Stack): number[] {
  const pids = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  return pids.flatMap((pid) => {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      const ours = cmdline.includes(stack.info.logs) || Number(pid) === stack.child.pid;
      return ours ? [Number(pid)] : [];
    } catch {
      return []; // gone while we looked
    }
  });
}

/** Ctrl+C in a terminal: SIGINT to every process of the foreground group. */
function ctrlC(stack: Stack): number {
  process.kill(-(stack.child.pid ?? 0), 'SIGINT');
  return Date.now();
}

async function api(stack: Stack, method: string, path: string, body?: unknown): Promise<Response> {
  const token = stack.info.identity?.users['admin']?.accessToken ?? '';
  return fetch(`${stack.info.restUrl}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? null : JSON.stringify(body),
  });
}

/** Runs `task` on each of `count` items, `width` at a time. */
async function inParallel(
  count: number,
  width: number,
  task: (index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      for (let index = next++; index < count; index = next++) await task(index);
    }),
  );
}

function expectNothingLeft(stack: Stack): void {
  expect(processesOf(stack)).toEqual([]);
  expect(existsSync(stack.info.logs)).toBe(false);
  expect(existsSync(join(stack.runDir, 'stack.json'))).toBe(false);
  expect(existsSync(join(stack.runDir, 'stack'))).toBe(false);
}

let stacks: Stack[] = [];
describe('make run', () => {
  afterEach(() => {
    // A failed test must not leave a control plane running: kill whatever it started.
    for (const stack of stacks) {
      for (const pid of processesOf(stack)) process.kill(pid, 'SIGKILL');
      rmSync(stack.info.logs, { recursive: true, force: true });
      rmSync(stack.runDir, { recursive: true, force: true });
    }
    stacks = [];
  });

  test(`Ctrl+C under load (${ENGINES} engines, ${RUNNING_AT_LEAST}+ running, calls in flight) stops everything within 15 s`, async () => {
    const started = Date.now();
    const stack = await startStack();
    stacks.push(stack);
    const phases: Record<string, number> = { start: Date.now() - started };
    // It says which engines run as real containers, naming resources that exist.
    const printed = await waitFor(
      () => Promise.resolve(/Press Ctrl\+C/.test(stack.output()) ? stack.output() : undefined),
      { what: 'make run to print how to use it', timeoutMs: 10_000, explain: stack.output },
    );
    expect(printed).toMatch(/Engines that run for real \(real containers on the node "[^"]+"/);
    const realProfile = /notebook engines\s+profile (\S+),/.exec(printed)?.[1] ?? '';
    const realImage = /image (workspaces\/global\/sandboxEngineImages\/\S+),/.exec(printed)?.[1] ?? '';
    for (const name of [realProfile, realImage])
      expect({ name, status: (await api(stack, 'GET', `/v1/${name}`)).status }).toEqual({
        name,
        status: 200,
      });
    const ws = 'workspaces/load';
    expect(
      (await api(stack, 'POST', `/v1/${ws}/daiEngineProfiles?daiEngineProfileId=p`, profile())).status,
    ).toBe(200);
    expect(
      (await api(stack, 'POST', `/v1/${ws}/daiEngineVersions?daiEngineVersionId=1.10.6`, { image: 'dai' }))
        .status,
    ).toBe(200);
    const engine = {
      profile: `${ws}/daiEngineProfiles/p`,
      daiEngineVersion: `${ws}/daiEngineVersions/1.10.6`,
    };
    // kubectl writes as a user go through the admission webhooks, registered from the chart.
    const manifest = {
      apiVersion: 'engine.h2o.ai/v1',
      kind: 'DAIEngine',
      metadata: { name: 'load.by-kubectl', namespace: 'ai-engine-manager' },
      spec: { ...engine, cpu: 99 },
    };
    const kubectl = spawnSync(
      join(stack.info.kubectlDir, 'kubectl'),
      ['--kubeconfig', stack.info.kubeconfig, '--as=admin', '--as-group=system:masters', 'apply', '-f', '-'],
      { input: JSON.stringify(manifest), encoding: 'utf8' },
    );
    expect(kubectl.stderr).toContain(
      'admission webhook "mutate.engine.h2o.ai" denied the request: Invalid dai_engine.cpu',
    );
    await inParallel(ENGINES, 16, async (index) => {
      const response = await api(stack, 'POST', `/v1/${ws}/daiEngines?daiEngineId=e${index}`, engine);
      expect(response.status).toBe(200);
    });
    phases['created'] = Date.now() - started;
    await waitFor(
      async () => {
        const response = await api(
          stack,
          'GET',
          `/v1/${ws}/daiEngines?pageSize=1&filter=${encodeURIComponent('state = STATE_RUNNING')}`,
        );
        const { totalSize } = (await response.json()) as { totalSize: number };
        return totalSize >= RUNNING_AT_LEAST ? totalSize : undefined;
      },
      {
        what: `${RUNNING_AT_LEAST} running engines`,
        timeoutMs: 600_000,
        intervalMs: 2_000,
        explain: stack.output,
      },
    );
    phases['running'] = Date.now() - started;
    // Calls in flight when the signal comes: lists, and pauses that make the operator work.
    let calling = true;
    const load = inParallel(1_000, 8, async (index) => {
      if (!calling) return;
      const call =
        index % 2 === 0
          ? api(stack, 'GET', `/v1/${ws}/daiEngines?pageSize=100`)
          : api(stack, 'POST', `/v1/${ws}/daiEngines/e${index}:pause`, {});
      await call.then((response) => response.arrayBuffer()).catch(() => undefined);
    });
    await waitFor(() => Promise.resolve(processesOf(stack).length >= 6 ? true : undefined), {
      what: 'the components',
    });
    const sent = ctrlC(stack);
    const { code, at } = await stack.exited;
    calling = false;
    await load;
    expect({ code, seconds: (at - sent) / 1000 }).toEqual({
      code: 0,
      seconds: expect.any(Number) as unknown,
    });
    expect(at - sent).toBeLessThan(15_000);
    await waitFor(() => Promise.resolve(processesOf(stack).length === 0 ? true : undefined), {
      what: 'every component to be gone',
      timeoutMs: 15_000 - (Date.now() - sent),
      explain: stack.output,
    });
    expectNothingLeft(stack);
    // Under load, nothing is an error: bad input and busy clusters are routine (what fails after the
    // stop began, against a cluster going away, is not judged).
    const [beforeStop = ''] = stack.output().split('Stopping (');
    expect(beforeStop).not.toMatch(/"level":50/);
    // A start is quiet: what a settling cluster answers is one line, never a stack trace.
    expect(beforeStop).not.toMatch(/"stack":|\n\s+at /);
    console.log(`make run under load: ms since start ${JSON.stringify(phases)}; stopped in ${at - sent} ms`);
  }, 900_000);

  test('a second Ctrl+C stops at once: every component killed, nothing left on disk', async () => {
    const stack = await startStack();
    stacks.push(stack);
    ctrlC(stack);
    await waitFor(() => Promise.resolve(stack.output().includes('Stopping (') ? true : undefined), {
      what: 'the stop to begin',
      explain: stack.output,
    });
    const second = ctrlC(stack);
    const { code, at } = await stack.exited;
    expect(code).toBe(130);
    expect(at - second).toBeLessThan(2_000);
    await waitFor(() => Promise.resolve(processesOf(stack).length === 0 ? true : undefined), {
      what: 'every component to be gone',
      timeoutMs: 5_000,
    });
    expectNothingLeft(stack);
  }, 300_000);
});
