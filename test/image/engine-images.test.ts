/**
 * The engine images (image/engines/build.sh) run with podman and runc as the operator's pods run
 * them on a real node: uid 1000, no capabilities, a read-only root, scratch space in /tmp, and
 * each engine's environment contract. Loading them into a node's containerd is the node
 * harness's part.
 */
import { execFile } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ensureEngineImages, type EngineImage, type EngineImageKind } from '../cluster/engine-images.ts';
import { waitFor } from '../cluster/wait.ts';

const CACHE =
  process.env['AIEM_CACHE'] ?? join(process.env['HOME'] ?? '/root', '.cache', 'ai-engine-manager');
/**
 * podman with storage of these tests' own (the product image's stays apart). podman records the
 * run root with the storage, so it is fixed, and short (podman takes at most 50 characters).
 */
const PODMAN = [
  ...['--runtime', 'runc'],
  ...['--root', join(CACHE, 'engine-images', 'podman')],
  ...['--runroot', '/tmp/aiem-engine-images-podman'],
];
const LIMITS = ['--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=1024:1024'];
/** The operator's isolation of every engine pod (operator/src/kinds/engine-user.ts, sandbox-engine.ts). */
const POD = [
  '--user',
  '1000:1000',
  '--read-only',
  '--cap-drop',
  'ALL',
  '--security-opt',
  'no-new-privileges',
];
const EMPTY_DIR = 'mode=1777';

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs podman; its exit code and output, whatever the code. */
async function podman(args: readonly string[]): Promise<Outcome> {
  try {
    const { stdout, stderr } = await promisify(execFile)('podman', [...PODMAN, ...args], {
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (error: unknown) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof failed.code !== 'number') throw error;
    return { code: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

/** Runs podman; its standard output, or an error with its standard error. */
async function podmanOk(args: readonly string[]): Promise<string> {
  const outcome = await podman(args);
  if (outcome.code !== 0) throw new Error(`podman ${args.join(' ')}: ${outcome.stderr.trim()}`);
  return outcome.stdout;
}

/** A file of a tar archive, as text. */
async function tarFile(archive: string, file: string): Promise<string> {
  const { stdout } = await promisify(execFile)('tar', ['-xOf', archive, file], { maxBuffer: 1024 * 1024 });
  return stdout;
}

/** The image id (its config's digest) that an OCI archive holds. */
async function archivedId(archive: string): Promise<string> {
  const index = JSON.parse(await tarFile(archive, 'index.json')) as { manifests: { digest: string }[] };
  const manifest = index.manifests[0]?.digest.replace('sha256:', '') ?? '';
  const { config } = JSON.parse(await tarFile(archive, `blobs/sha256/${manifest}`)) as {
    config: { digest: string };
  };
  return config.digest.replace('sha256:', '');
}

/** Loads the archive into the tests' storage unless that image is there already. */
async function load(image: EngineImage): Promise<void> {
  const present = await podman(['image', 'inspect', '--format', '{{.Id}}', image.ref]);
  if (present.code === 0 && present.stdout.trim() === (await archivedId(image.archive))) return;
  await podmanOk(['load', '--quiet', '--input', image.archive]);
  // The image the ref named before (an archive of older content) is of no use any more.
  await podmanOk(['image', 'prune', '--force']);
}

let images: Record<EngineImageKind, EngineImage>;
const started = new Set<string>();
const folders = new Set<string>();

beforeAll(async () => {
  const built = await ensureEngineImages();
  images = Object.fromEntries(built.map((image) => [image.kind, image])) as Record<
    EngineImageKind,
    EngineImage
  >;
  for (const image of built) await load(image);
}, 30 * 60_000);

afterEach(async () => {
  for (const name of started) await podman(['rm', '--force', '--time', '0', name]);
  started.clear();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  folders.clear();
});

/** Starts a container in the background; its name. */
async function start(
  kind: EngineImageKind,
  args: readonly string[],
  command: readonly string[] = [],
): Promise<string> {
  const name = `aiem-engine-test-${kind}-${process.pid}-${Date.now()}`;
  started.add(name);
  await podmanOk([
    'run',
    '--detach',
    '--name',
    name,
    '--pull=never',
    ...LIMITS,
    ...POD,
    ...args,
    images[kind].ref,
    ...command,
  ]);
  return name;
}

/** A host folder for a volume, owned by uid 1000 as the kubelet's fsGroup makes a claim. */
function volume(): string {
  const folder = mkdtempSync(join(tmpdir(), 'aiem-engine-volume-'));
  folders.add(folder);
  chownSync(folder, 1000, 1000);
  return folder;
}

/**
 * The engine's own port on the host's network: podman's bridge keeps its network namespaces under
 * /run/netns, where a real node's harness on this machine mounts and unmounts its own. The port
 * must be free first, or the test would talk to something else.
 */
async function hostPort(port: number): Promise<string> {
  const taken = await fetch(`http://127.0.0.1:${port}/`).then(
    () => true,
    () => false,
  );
  if (taken) throw new Error(`Port ${port} is taken on this machine: the engine's contract fixes it`);
  return `http://127.0.0.1:${port}`;
}

/** Polls until `url` answers 200; the answer. */
async function answering(url: string, name: string, timeoutMs: number): Promise<Response> {
  return waitFor(
    async () => {
      const state = (await podmanOk(['inspect', '--format', '{{.State.Status}}', name])).trim();
      if (state === 'exited')
        throw new Error(`${name} exited: ${(await podman(['logs', name])).stderr.slice(-2000)}`);
      const response = await fetch(url);
      return response.status === 200 ? response : undefined;
    },
    { what: url, timeoutMs, intervalMs: 250 },
  );
}

/** Runs `code` in a Jupyter kernel through its websocket (Jupyter's messaging protocol); what it printed. */
async function runInKernel(url: string, code: string): Promise<string> {
  const socket = new WebSocket(url);
  try {
    return await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`No output from the kernel at ${url}`));
      }, 60_000);
      socket.onerror = () => {
        reject(new Error(`The kernel's websocket ${url} failed`));
      };
      socket.onopen = () => {
        const header = {
          msg_id: 'test-1',
          msg_type: 'execute_request',
          session: 'test',
          username: '',
          version: '5.3',
        };
        const content = { code, silent: false };
        socket.send(
          JSON.stringify({ header, parent_header: {}, metadata: {}, content, channel: 'shell', buffers: [] }),
        );
      };
      socket.onmessage = (event: MessageEvent) => {
        const message = JSON.parse(String(event.data)) as { msg_type: string; content: { text?: string } };
        if (message.msg_type !== 'stream') return;
        clearTimeout(timer);
        resolve(message.content.text ?? '');
      };
    });
  } finally {
    socket.close();
  }
}

test('sandbox image runs commands as user 1000 on a read-only root, writes /workspace, and ends at once on SIGTERM', async () => {
  const name = await start('sandbox', [
    ...['--network=none', '--volume', `${volume()}:/workspace`],
    ...['--tmpfs', `/tmp:${EMPTY_DIR}`, '--tmpfs', `/home/sandbox:${EMPTY_DIR}`],
  ]);
  const python = await podmanOk([
    'exec',
    name,
    'python3',
    '-c',
    'import os; print(os.getuid(), os.getgid(), os.getcwd())',
  ]);
  expect(python.trim()).toBe('1000 1000 /workspace');
  // What the API's file, process and metrics scripts run (gateway/src/sandbox/), through sh -c.
  const shell = await podmanOk([
    ...['exec', name, 'sh', '-c'],
    'id -un; echo "$HOME"; printf hello > /workspace/f && stat -L -c "%F|%s|%a" /workspace/f && head -c 5 /workspace/f && echo && df -Pk /workspace | wc -l; mkdir -p /tmp/.aiem-processes && echo $$ > /tmp/.aiem-processes/p && kill -0 "$(cat /tmp/.aiem-processes/p)" && echo alive',
  ]);
  expect(shell.split('\n')).toEqual([
    'sandbox',
    '/home/sandbox',
    'regular file|5|644',
    'hello',
    '2',
    'alive',
    '',
  ]);
  const readOnly = await podman(['exec', name, 'sh', '-c', 'echo x > /etc/probe']);
  expect(readOnly.code).not.toBe(0);
  expect(readOnly.stderr).toMatch(/Read-only file system/);

  const before = Date.now();
  await podmanOk(['stop', '--time', '10', name]);
  expect(Date.now() - before).toBeLessThan(2_000);
  // 128 + 15: ended by the SIGTERM itself, not by the SIGKILL that follows the grace period.
  expect((await podmanOk(['inspect', '--format', '{{.State.ExitCode}}', name])).trim()).toBe('143');
}, 120_000);

test('notebook image serves JupyterLab under NB_PREFIX only, without a token, and starts a kernel', async () => {
  const prefix = '/workspaces/w1/notebookEngines/n1';
  const base = await hostPort(8888);
  const name = await start('notebook', [
    ...['--network=host', '--tmpfs', `/tmp:${EMPTY_DIR}`, '--volume', `${volume()}:/home/jovyan`],
    ...['--env', `NB_PREFIX=${prefix}`, '--env', 'HOME=/home/jovyan'],
  ]);
  const status = await answering(`${base}${prefix}/api/status`, name, 90_000);
  expect(status.headers.get('content-type')).toMatch(/application\/json/);
  expect(await status.json()).toHaveProperty('started');
  expect((await fetch(`${base}/api/status`)).status).toBe(404);

  // Without a token Jupyter still checks XSRF on writes: the cookie it sets, sent back as a header.
  const kernels = `${base}${prefix}/api/kernels`;
  const post = (headers: Record<string, string>): Promise<Response> =>
    fetch(kernels, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: '{}',
    });
  expect((await post({})).status).toBe(403);
  const cookie = (await fetch(`${base}${prefix}/lab`)).headers
    .getSetCookie()
    .find((c) => c.startsWith('_xsrf='));
  const xsrf = cookie?.split(';')[0]?.slice('_xsrf='.length) ?? '';
  expect(xsrf).not.toBe('');
  const created = await post({ Cookie: `_xsrf=${xsrf}`, 'X-XSRFToken': xsrf });
  expect(created.status).toBe(201);
  const { id } = (await created.json()) as { id: string };
  // The kernel runs code: what JupyterLab does over the kernel's websocket.
  const printed = await runInKernel(
    `${base.replace('http', 'ws')}${prefix}/api/kernels/${id}/channels`,
    'import os; print(os.getuid(), os.getcwd())',
  );
  expect(printed).toBe('1000 /home/jovyan\n');
  expect(
    ((await (await fetch(`${kernels}/${id}`)).json()) as { execution_state: string }).execution_state,
  ).toBe('idle');
  expect((await podmanOk(['exec', name, 'id', '-u'])).trim()).toBe('1000');
}, 180_000);

test('H2O image answers /3/Cloud under H2O_CONTEXT_PATH, with a heap of half the memory limit', async () => {
  const path = '/workspaces/w1/h2oEngines/h1';
  const base = await hostPort(54321);
  const name = await start('h2o', [
    ...['--network=host', '--tmpfs', `/tmp:${EMPTY_DIR}`, '--memory', '2g'],
    // The operator always sets these, empty when the profile gives none.
    ...[
      '--env',
      `H2O_CONTEXT_PATH=${path}`,
      '--env',
      'JAVA_OPTS=',
      '--env',
      'H2O_OPTS=',
      '--env',
      'CLASSPATH=',
    ],
  ]);
  const cloud = (await (await answering(`${base}${path}/3/Cloud`, name, 120_000)).json()) as {
    version: string;
    cloud_size: number;
    consensus: boolean;
    nodes: { max_mem: number }[];
  };
  expect(cloud).toMatchObject({ version: images.h2o.ref.split(':').pop(), cloud_size: 1, consensus: true });
  expect(cloud.nodes[0]?.max_mem).toBeGreaterThan(0.9 * 2 ** 30);
  expect(cloud.nodes[0]?.max_mem).toBeLessThan(1.1 * 2 ** 30);
  expect((await fetch(`${base}/3/Cloud`)).status).toBe(404);
}, 180_000);
