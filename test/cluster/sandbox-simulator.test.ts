import { existsSync, statSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { PodExec, sandboxScript } from '../../gateway/src/sandbox/pod-exec.ts';
import { ENGINE_KIND_LABEL } from '../../shared/resources.ts';
import { startSandboxPod } from '../helpers/sandbox-pod.ts';
import { useCluster } from '../helpers/use-cluster.ts';
import {
  execRuleFor,
  isSandboxPod,
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
  test('isSandboxPod() is true only for pods labelled with the sandbox engine kind', () => {
    expect(isSandboxPod(pod({ [ENGINE_KIND_LABEL]: SANDBOX_KIND }))).toBe(true);
    expect(isSandboxPod(pod({ [ENGINE_KIND_LABEL]: 'NotebookEngine' }))).toBe(false);
    expect(isSandboxPod(pod({}))).toBe(false);
  });

  test('execRuleFor() confines commands to the directory, as the unprivileged user, owned by the pod', () => {
    const rule = execRuleFor(pod({}), '/dev/shm/run/sandboxes/ns/p1');
    expect(rule).toMatchObject({
      kind: 'Exec',
      metadata: { name: 'p1', namespace: 'ns', ownerReferences: [{ kind: 'Pod', name: 'p1', uid: 'u1' }] },
      spec: {
        execs: [
          {
            local: {
              workDir: '/dev/shm/run/sandboxes/ns/p1',
              envs: [{ name: SANDBOX_ROOT_ENV, value: '/dev/shm/run/sandboxes/ns/p1' }],
              securityContext: { runAsUser: SANDBOX_UID, runAsGroup: SANDBOX_UID },
            },
          },
        ],
      },
    });
  });

  test.each(['', '/', '//', 'relative/dir'])('execRuleFor() refuses the root %j', (dir) => {
    expect(() => execRuleFor(pod({}), dir)).toThrow(/without a sandbox root/);
  });

  test('sandboxDir() refuses names that could leave the sandboxes folder', () => {
    expect(sandboxDir('/run/sandboxes', { namespace: 'ns', name: 'p1' })).toBe('/run/sandboxes/ns/p1');
    expect(() => sandboxDir('/run/sandboxes', { namespace: 'ns', name: '../x' })).toThrow();
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
