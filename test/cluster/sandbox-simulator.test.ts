import { REAL_NODE } from './real-node.ts';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { Process } from '../../gateway/src/gen/ai/h2o/engine/v1/process.pb.ts';
import { PodExec, sandboxScript } from '../../gateway/src/sandbox/pod-exec.ts';
import { startArgv } from '../../gateway/src/sandbox/process-runner.ts';
import { ENGINE_KIND_LABEL } from '../../shared/resources.ts';
import { startSandboxPod } from '../helpers/sandbox-pod.ts';
import { useCluster } from '../helpers/use-cluster.ts';
import { doomed, hasMark, hostProcesses, parseStat, type HostProcess } from './sandbox-processes.ts';
import {
  DEFAULT_PATH,
  entryPath,
  entryScript,
  execRuleFor,
  isSandboxPod,
  mountDirs,
  podEnvironment,
  SANDBOX_ENTER_ENV,
  SANDBOX_KIND,
  SANDBOX_ROOT_ENV,
  SANDBOX_UID,
  sandboxDir,
} from './sandbox-simulator.ts';
import { waitFor } from './wait.ts';

const pod = (labels: Record<string, string>): V1Pod => ({
  metadata: { name: 'p1', namespace: 'ns', uid: 'u1', labels },
});

describe('sandbox simulator decisions', () => {
  test('isSandboxPod() is true only for pods labelled with the sandbox engine kind on a simulated node', () => {
    expect(isSandboxPod(pod({ [ENGINE_KIND_LABEL]: SANDBOX_KIND }))).toBe(true);
    expect(isSandboxPod(pod({ [ENGINE_KIND_LABEL]: 'NotebookEngine' }))).toBe(false);
    expect(isSandboxPod(pod({}))).toBe(false);
    // The real node runs its sandboxes' commands in their containers.
    const onRealNode: V1Pod = {
      metadata: { name: 'p1', namespace: 'ns', labels: { [ENGINE_KIND_LABEL]: SANDBOX_KIND } },
      spec: { containers: [], nodeName: REAL_NODE.name },
    };
    expect(isSandboxPod(onRealNode)).toBe(false);
  });

  test('execRuleFor() confines commands to the directory, as the sandbox user, through the entry, owned by the pod', () => {
    const rule = execRuleFor(pod({}), '/dev/shm/run/sandboxes/ns/p1', '/dev/shm/run/sandboxes/.enter/ns/p1');
    expect(rule).toMatchObject({
      kind: 'Exec',
      metadata: { name: 'p1', namespace: 'ns', ownerReferences: [{ kind: 'Pod', name: 'p1', uid: 'u1' }] },
      spec: {
        execs: [
          {
            local: {
              workDir: '/dev/shm/run/sandboxes/ns/p1',
              envs: [
                { name: SANDBOX_ROOT_ENV, value: '/dev/shm/run/sandboxes/ns/p1' },
                { name: SANDBOX_ENTER_ENV, value: '/dev/shm/run/sandboxes/.enter/ns/p1' },
              ],
              securityContext: { runAsUser: 1000, runAsGroup: 1000 },
            },
          },
        ],
      },
    });
  });

  test.each(['', '/', '//', 'relative/dir'])('execRuleFor() refuses the root %j', (dir) => {
    expect(() => execRuleFor(pod({}), dir, '/enter')).toThrow(/without a sandbox root/);
  });

  test('sandboxDir() and entryPath() refuse names that could leave the sandboxes folder', () => {
    expect(sandboxDir('/run/sandboxes', { namespace: 'ns', name: 'p1' })).toBe('/run/sandboxes/ns/p1');
    expect(() => sandboxDir('/run/sandboxes', { namespace: 'ns', name: '../x' })).toThrow();
    expect(entryPath('/run/sandboxes', { namespace: 'ns', name: 'p1' })).toBe('/run/sandboxes/.enter/ns/p1');
    expect(() => entryPath('/run/sandboxes', { namespace: 'ns', name: '../x' })).toThrow();
  });

  const specified: V1Pod = {
    metadata: { name: 'p1', namespace: 'ns' },
    spec: {
      containers: [
        {
          name: 'sandbox',
          env: [
            { name: 'HOME', value: '/home/sandbox' },
            { name: 'GREETING', value: "it's me" },
            { name: 'FROM_SECRET', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } },
            { name: SANDBOX_ROOT_ENV, value: '/elsewhere' },
          ],
          volumeMounts: [
            { name: 'workspace', mountPath: '/workspace' },
            { name: 'home', mountPath: '/home/sandbox/' },
            { name: 'odd', mountPath: '/../tmp' },
            { name: 'token', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' },
          ],
        },
      ],
      volumes: [
        { name: 'workspace', emptyDir: {} },
        { name: 'home', emptyDir: {} },
        { name: 'odd', emptyDir: {} },
        { name: 'token', projected: { sources: [] } },
      ],
    },
  };

  test("podEnvironment() is a container's: default PATH, HOSTNAME, the spec's values, HOME mapped into the pod, its root last", () => {
    expect(podEnvironment(specified, '/run/sandboxes/ns/p1')).toEqual([
      { name: 'PATH', value: DEFAULT_PATH },
      { name: 'HOSTNAME', value: 'p1' },
      { name: 'GREETING', value: "it's me" },
      { name: 'HOME', value: '/run/sandboxes/ns/p1/home/sandbox' },
      { name: SANDBOX_ROOT_ENV, value: '/run/sandboxes/ns/p1' },
    ]);
    expect(podEnvironment(pod({}), '/d').find((v) => v.name === 'HOME')?.value).toBe('/d');
  });

  test("mountDirs() places the scratch volumes' mounts below the pod directory, never above it", () => {
    expect(mountDirs(specified, '/d')).toEqual(['/d/workspace', '/d/home/sandbox', '/d/tmp']);
  });

  test('entryScript() runs the command with exactly the given environment, in a session of its own, keeping its exit code', () => {
    const dir = mkdtempSync(join(tmpdir(), 'entry-'));
    const entry = join(dir, 'enter');
    writeFileSync(
      entry,
      entryScript({ namespace: 'ns', name: 'p1' }, [
        { name: 'PATH', value: DEFAULT_PATH },
        { name: 'QUOTED', value: "a 'b' $c\nd" },
      ]),
      { mode: 0o755 },
    );
    try {
      const result = spawnSync(
        entry,
        ['sh', '-c', 'env; echo "session:$(cut -d" " -f6 /proc/$$/stat)=$$"; exit 5'],
        {
          env: { ...process.env, LEAKED: 'host' },
          encoding: 'utf8',
        },
      );
      expect(result.status).toBe(5);
      expect(result.stdout).toContain("QUOTED=a 'b' $c\nd\n");
      expect(result.stdout).not.toContain('LEAKED');
      const session = /session:(\d+)=(\d+)/.exec(result.stdout);
      expect(session?.[1]).toBe(session?.[2]);
    } finally {
      rmSync(dir, { recursive: true });
    }
  });

  test('parseStat() reads the state and session, whatever the command name holds', () => {
    expect(parseStat('42 (a) b (c) S 1 42 42 0 -1 4194560')).toEqual({ state: 'S', session: 42 });
    expect(parseStat('garbage')).toBeUndefined();
  });

  test("doomed() picks the sandbox user's marked processes and their sessions, and no one else", () => {
    const p = (pid: number, session: number, more: Partial<HostProcess> = {}): HostProcess => ({
      pid,
      session,
      uid: SANDBOX_UID,
      zombie: false,
      marked: false,
      ...more,
    });
    const sessions = new Set<number>();
    const processes = [
      p(1, 1, { uid: 0 }), // kwok, say
      p(10, 1, { marked: true }), // a command before it entered its session
      p(20, 20, { marked: true }), // a command, leading its session
      p(21, 20), // its child, environment cleared
      p(22, 20, { zombie: true }),
      p(30, 30, { marked: true, uid: 0 }), // not the sandbox user's
      p(40, 40), // another sandbox's
    ];
    expect(doomed(processes, SANDBOX_UID, sessions)).toEqual([10, 20, 21]);
    // Once the leader is gone, its session is still known.
    expect(doomed([p(21, 20)], SANDBOX_UID, sessions)).toEqual([21]);
    expect(hasMark(['A=1', `${SANDBOX_ROOT_ENV}=/s/ns/p1`], { exact: `${SANDBOX_ROOT_ENV}=/s/ns/p1` })).toBe(
      true,
    );
    expect(hasMark([`${SANDBOX_ROOT_ENV}=/s/ns/p10`], { exact: `${SANDBOX_ROOT_ENV}=/s/ns/p1` })).toBe(false);
    expect(hasMark([`${SANDBOX_ROOT_ENV}=/s/ns/p10`], { prefix: `${SANDBOX_ROOT_ENV}=/s/` })).toBe(true);
  });
});

describe('the sandbox simulator on the local control plane', () => {
  const cluster = useCluster({ nodes: { cpuNodes: 1, gpuNodes: 0, gpusPerNode: 0 } });
  const exec = (): PodExec => new PodExec(cluster().kubeConfig);

  async function namespace(name: string): Promise<string> {
    await cluster()
      .kubeConfig.makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name } } });
    return name;
  }

  /** Runs a sandbox script and collects its output. */
  async function run(
    target: Parameters<PodExec['run']>[0],
    script: string,
    options: { args?: string[]; stdin?: Uint8Array } = {},
  ): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = '';
    let stderr = '';
    const code = await exec().run(target, sandboxScript(script, options.args ?? []), {
      ...(options.stdin === undefined ? {} : { stdin: options.stdin }),
      onStdout: (chunk) => (stdout += chunk.toString()),
      onStderr: (chunk) => (stderr += chunk.toString()),
      signal: AbortSignal.timeout(20_000),
    });
    return { code, stdout, stderr };
  }

  test('a sandbox pod gets its own directory, owned by the sandbox user, where its commands run', async () => {
    const ns = await namespace('sbx-dir');
    const { target, dir } = await startSandboxPod(cluster(), ns, 'box');
    expect(dir).toBe(join(cluster().runDir, 'sandboxes', ns, 'box'));
    expect(statSync(dir).uid).toBe(SANDBOX_UID);
    const { code, stdout } = await run(target, 'printf "%s|%s|%s" "$R" "$(pwd)" "$(id -u):$(id -g)"');
    expect(code).toBe(0);
    expect(stdout).toBe(`${dir}|${dir}|${SANDBOX_UID}:${SANDBOX_UID}`);
  });

  test("a sandbox's commands see the pod's environment, HOME in its home, uid 1000, and a PATH where an unknown command is 127", async () => {
    const ns = await namespace('sbx-env');
    const { target, dir } = await startSandboxPod(cluster(), ns, 'box', {
      env: [
        { name: 'HOME', value: '/home/sandbox' },
        { name: 'GREETING', value: 'hello' },
      ],
      volumeMounts: [
        { name: 'workspace', mountPath: '/workspace' },
        { name: 'home', mountPath: '/home/sandbox' },
        { name: 'tmp', mountPath: '/tmp' },
      ],
    });
    for (const mount of ['workspace', 'home/sandbox', 'tmp']) {
      expect({ mount, uid: statSync(join(dir, mount)).uid }).toEqual({ mount, uid: SANDBOX_UID });
    }
    // A process as the gateway starts one: its own variables on top of the container's.
    let out = '';
    const code = await exec().run(
      target,
      startArgv(
        'p1',
        Process.fromPartial({
          command: 'sh',
          args: [
            '-c',
            'env; echo "id=$(id -u):$(id -g)"; touch "$HOME/made"; no-such-command; echo "unknown=$?"',
          ],
          workingDirectory: '/workspace',
          environmentVariables: { OWN: 'mine' },
        }),
      ),
      { onStdout: (chunk) => (out += chunk.toString()), signal: AbortSignal.timeout(20_000) },
    );
    expect(code).toBe(0);
    const env = Object.fromEntries(
      out
        .split('\n')
        .filter((line) => /^[A-Z_][A-Z0-9_]*=/.test(line))
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    );
    expect(env).toMatchObject({
      GREETING: 'hello',
      OWN: 'mine',
      HOME: join(dir, 'home/sandbox'),
      PATH: DEFAULT_PATH,
    });
    // Nothing of the host's (or kwok's) own environment.
    const expected = [
      'AIEM_SANDBOX_ROOT',
      'GREETING',
      'HOME',
      'HOSTNAME',
      'OWN',
      'PATH',
      'PWD',
      'SHLVL',
      '_',
      'OLDPWD',
    ];
    expect(Object.keys(env).filter((name) => !expected.includes(name))).toEqual([]);
    expect(out).toContain(`id=${SANDBOX_UID}:${SANDBOX_UID}\n`);
    expect(out).toContain('unknown=127\n');
    expect(statSync(join(dir, 'home/sandbox/made')).uid).toBe(SANDBOX_UID);
    const missing = await exec().run(
      target,
      startArgv('p2', Process.fromPartial({ command: 'no-such-command', workingDirectory: '/' })),
      { signal: AbortSignal.timeout(20_000) },
    );
    expect(missing).toBe(127);
  });

  test("a sandbox's processes, with everything they started, end within seconds of its pod's deletion", async () => {
    const ns = await namespace('sbx-end');
    const { target, dir } = await startSandboxPod(cluster(), ns, 'box');
    const running = exec().run(target, sandboxScript('sleep 300 & (sleep 300 &) ; echo started; wait', []), {
      onStdout: () => undefined,
    });
    const mark = { exact: `${SANDBOX_ROOT_ENV}=${dir}` };
    await waitFor(
      async () =>
        (await hostProcesses(mark)).filter((p) => p.marked && !p.zombie).length >= 3 ? true : undefined,
      { what: 'the sandbox commands to run', timeoutMs: 20_000 },
    );
    const deleted = Date.now();
    await cluster()
      .kubeConfig.makeApiClient(CoreV1Api)
      .deleteNamespacedPod({ namespace: ns, name: 'box', gracePeriodSeconds: 30 });
    expect(await running).toBe(137);
    expect(Date.now() - deleted).toBeLessThan(3_000);
    await waitFor(
      async () => ((await hostProcesses(mark)).every((p) => p.zombie || !p.marked) ? true : undefined),
      { what: 'no process of the sandbox to be left', timeoutMs: 3_000 },
    );
  });

  test('PodExec reports exit codes, separate output streams, and stdin of an exact length', async () => {
    const ns = await namespace('sbx-exec');
    const { target } = await startSandboxPod(cluster(), ns, 'box');
    expect(await run(target, 'echo out; echo err >&2; exit 3')).toEqual({
      code: 3,
      stdout: 'out\n',
      stderr: 'err\n',
    });
    expect((await run(target, 'kill -TERM $$')).code).toBe(143);
    // kwok never closes stdin: the command reads exactly as many bytes as were sent.
    const bytes = Buffer.alloc(300_000, 'x');
    bytes[0] = 0;
    bytes[299_999] = 255;
    const counted = await run(
      target,
      'head -c "$1" | od -An -tu1 | tr -s " \\n" " " | cut -c1-6; head -c 0',
      {
        args: [String(bytes.length)],
        stdin: bytes,
      },
    );
    expect(counted.code).toBe(0);
    expect(counted.stdout.trim().startsWith('0 120')).toBe(true);
    const size = await run(target, 'head -c "$1" | wc -c', { args: [String(bytes.length)], stdin: bytes });
    expect(size.stdout.trim()).toBe(String(bytes.length));
  });

  test('PodExec delivers every byte of a large output before it resolves', async () => {
    const ns = await namespace('sbx-output');
    const { target } = await startSandboxPod(cluster(), ns, 'box');
    const { code, stdout } = await run(
      target,
      'i=0; while [ $i -lt 2000 ]; do echo "line $i"; i=$((i+1)); done',
    );
    expect(code).toBe(0);
    expect(stdout.split('\n')).toHaveLength(2001);
    expect(stdout.endsWith('line 1999\n')).toBe(true);
  });

  test('PodExec fails clearly for a pod that does not exist, and stops on abort', async () => {
    const ns = await namespace('sbx-errors');
    await expect(
      exec().run({ namespace: ns, pod: 'missing', container: 'sandbox' }, ['true']),
    ).rejects.toThrow(/Cannot exec in pod sbx-errors\/missing/);
    const { target } = await startSandboxPod(cluster(), ns, 'box');
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => {
      controller.abort(new Error('stop'));
    }, 500);
    await expect(
      exec().run(target, sandboxScript('sleep 5', []), { signal: controller.signal }),
    ).rejects.toThrow('stop');
    expect(Date.now() - started).toBeLessThan(4_000);
  });

  test('deleting a sandbox pod removes its directory', async () => {
    const ns = await namespace('sbx-delete');
    const { target, dir } = await startSandboxPod(cluster(), ns, 'box');
    expect((await run(target, 'echo hi > "$R/file"')).code).toBe(0);
    expect(await readdir(dir)).toEqual(['file']);
    await cluster()
      .kubeConfig.makeApiClient(CoreV1Api)
      .deleteNamespacedPod({ namespace: ns, name: 'box', gracePeriodSeconds: 0 });
    await waitFor(() => Promise.resolve(existsSync(dir) ? undefined : true), {
      what: 'the sandbox directory to go',
    });
  });
});
