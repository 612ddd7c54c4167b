import { execFile } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AppsV1Api, CoreV1Api, type V1StatefulSet } from '@kubernetes/client-node';
import { startCluster, type Cluster } from '../cluster/cluster.ts';
import { BRIDGE, NODE_PATHS, NODE_SYSCTLS } from '../cluster/node-host.ts';
import { REAL_NODE } from '../cluster/real-node.ts';
import { waitFor } from '../cluster/wait.ts';

const run = promisify(execFile);
const NAMESPACE = 'default';
// One small CPU node beside the real one: enough to show that pods land where they are placed.
const NODES = { cpuNodes: 1, gpuNodes: 0, gpusPerNode: 0 };

/** What a real node may leave on the machine; every entry must be empty after it stops. */
async function leftovers(): Promise<Record<string, string[]>> {
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .filter((point) =>
      [NODE_PATHS.state, NODE_PATHS.data, ...NODE_PATHS.hardCoded].some((p) => point.startsWith(p)),
    );
  const processes = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '';
      } catch {
        return '';
      }
    })
    .filter((command) =>
      /\/(kubelet|containerd|containerd-shim-runc-v2|kube-proxy|coredns|local-path-provisioner|kube-network-policies)$/.test(
        command,
      ),
    );
  const cgroups = readdirSync('/sys/fs/cgroup')
    .map((controller) => join('/sys/fs/cgroup', controller, 'kubepods'))
    .filter((dir) => existsSync(dir));
  const chains = (
    await Promise.all(
      ['filter', 'nat'].map((table) => run('iptables', ['-t', table, '-S']).then((r) => r.stdout)),
    )
  )
    .join('\n')
    .split('\n')
    .filter((line) => /^-N (KUBE-|AIEM-)/.test(line));
  const links = (await run('ip', ['-o', 'link', 'show']).then((r) => r.stdout))
    .split('\n')
    .filter((line) => line.includes(`${BRIDGE}:`) || line.includes(`master ${BRIDGE}`));
  const folders = [NODE_PATHS.state, NODE_PATHS.data].filter((dir) => existsSync(dir));
  return { mounts, processes, cgroups, chains, links, folders };
}

function sysctls(): Record<string, string> {
  return Object.fromEntries(
    Object.keys(NODE_SYSCTLS).map((key) => [key, readFileSync(join('/proc/sys', key), 'utf8').trim()]),
  );
}

function statefulSet(name: string, claimClass: string): V1StatefulSet {
  const labels = { app: name };
  return {
    metadata: { name },
    spec: {
      serviceName: name,
      replicas: 1,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          nodeSelector: { [REAL_NODE.label.key]: REAL_NODE.label.value },
          tolerations: [{ key: REAL_NODE.taint.key, operator: 'Exists', effect: 'NoSchedule' }],
          terminationGracePeriodSeconds: 1,
          securityContext: { runAsUser: 1000, runAsGroup: 1000 },
          containers: [
            {
              name: 'main',
              image: cluster().realNode?.images.find((i) => i.kind === 'sandbox')?.ref,
              imagePullPolicy: 'Never',
              volumeMounts: [{ name: 'data', mountPath: '/data' }],
            },
          ],
        },
      },
      volumeClaimTemplates: [
        {
          metadata: { name: 'data' },
          spec: {
            storageClassName: claimClass,
            accessModes: ['ReadWriteOnce'],
            resources: { requests: { storage: '64Mi' } },
          },
        },
      ],
    },
  };
}

let current: Cluster | undefined;
function cluster(): Cluster {
  if (current === undefined) throw new Error('The cluster is not running');
  return current;
}

describe('a real node beside the simulated ones', () => {
  beforeAll(async () => {
    current = await startCluster({ realNode: true, nodes: NODES });
  }, 20 * 60_000);
  afterAll(async () => {
    await current?.stop();
  }, 120_000);

  test('registers Ready, labelled and tainted, beside the simulated nodes', async () => {
    const nodes = (await cluster().kubeConfig.makeApiClient(CoreV1Api).listNode()).items;
    const real = nodes.find((n) => n.metadata?.name === REAL_NODE.name);
    expect(real?.metadata?.labels?.[REAL_NODE.label.key]).toBe(REAL_NODE.label.value);
    expect(real?.spec?.taints).toEqual(expect.arrayContaining([expect.objectContaining(REAL_NODE.taint)]));
    expect(nodes.filter((n) => n.metadata?.name !== REAL_NODE.name)).toHaveLength(NODES.cpuNodes);
  });

  test('runs a container with a dynamic volume whose data outlives the pod, and exec reaches it', async () => {
    const apps = cluster().kubeConfig.makeApiClient(AppsV1Api);
    const core = cluster().kubeConfig.makeApiClient(CoreV1Api);
    await apps.createNamespacedStatefulSet({
      namespace: NAMESPACE,
      body: statefulSet('keeper', REAL_NODE.storageClass),
    });
    const running = async (): Promise<string> =>
      waitFor(
        async () => {
          const pod = await core
            .readNamespacedPod({ name: 'keeper-0', namespace: NAMESPACE })
            .catch(() => undefined);
          if (pod?.status?.containerStatuses?.[0]?.ready !== true) return undefined;
          return pod.metadata?.deletionTimestamp === undefined ? pod.metadata?.uid : undefined;
        },
        { what: 'keeper-0 to run on the real node', timeoutMs: 60_000 },
      );
    const firstUid = await running();
    const pod = await core.readNamespacedPod({ name: 'keeper-0', namespace: NAMESPACE });
    expect(pod.spec?.nodeName).toBe(REAL_NODE.name);
    // A real container: its kernel, its user, its own root.
    const kubectl = (args: string[]): Promise<string> => cluster().kubectl(['-n', NAMESPACE, ...args]);
    expect(await kubectl(['exec', 'keeper-0', '--', 'sh', '-c', 'echo kept > /data/file && id -u'])).toBe(
      '1000\n',
    );
    await core.deleteNamespacedPod({ name: 'keeper-0', namespace: NAMESPACE });
    const secondUid = await waitFor(
      async () => {
        const uid = await running();
        return uid !== firstUid ? uid : undefined;
      },
      { what: 'a new keeper-0', timeoutMs: 90_000 },
    );
    expect(secondUid).not.toBe(firstUid);
    expect(await kubectl(['exec', 'keeper-0', '--', 'cat', '/data/file'])).toBe('kept\n');
  }, 180_000);

  test('resolves Services by cluster DNS and routes ClusterIPs from pods', async () => {
    const core = cluster().kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespacedService({
      namespace: NAMESPACE,
      body: {
        metadata: { name: 'keeper' },
        spec: { selector: { app: 'keeper' }, ports: [{ port: 80, targetPort: 8000 }] },
      },
    });
    const service = await core.readNamespacedService({ name: 'keeper', namespace: NAMESPACE });
    const kubectl = (args: string[]): Promise<string> => cluster().kubectl(['-n', NAMESPACE, ...args]);
    const resolved = await waitFor(
      async () => {
        const out = await kubectl([
          'exec',
          'keeper-0',
          '--',
          'python3',
          '-c',
          'import socket; print(socket.gethostbyname("keeper.default.svc.cluster.local"))',
        ]).catch(() => '');
        return out.trim() !== '' ? out.trim() : undefined;
      },
      { what: 'cluster DNS to answer for the Service' },
    );
    expect(resolved).toBe(service.spec?.clusterIP);
  }, 120_000);

  test(
    'stops leaving nothing behind, also after a crash',
    async () => {
      // A crash: every component killed at once, nothing cleaned up.
      cluster().kill();
      current = await startCluster({ realNode: true, nodes: NODES });
      expect(cluster().realNode).toBeDefined();
      // What the machine had before any node changed it, as the node saved it.
      const original = JSON.parse(readFileSync(join(NODE_PATHS.state, 'sysctls.json'), 'utf8')) as unknown;
      let left: Record<string, string[]> = {};
      let after: Record<string, string> = {};
      // Looked at before the machine's one real node may start again for another test file.
      await cluster().stop({
        whileRealNodeHeld: async () => {
          left = await leftovers();
          after = sysctls();
        },
      });
      current = undefined;
      expect(left).toEqual({ mounts: [], processes: [], cgroups: [], chains: [], links: [], folders: [] });
      expect(after).toEqual(original);
    },
    20 * 60_000,
  );
});
