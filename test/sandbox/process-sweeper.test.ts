/**
 * Processes whose runner stopped: the sweeper of another replica settles one whose pid is gone
 * (on its second look), and leaves alone one that still runs in its sandbox. Real pods/exec into
 * a sandbox pod of the test cluster, real Process resources.
 */
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { API_VERSION, GROUP, ID_LABEL, VERSION, WORKSPACE_LABEL } from '../../shared/resources.ts';
import { SANDBOX_CONTAINER as CONTAINER, sandboxPodName } from '../../shared/workloads.ts';
import { Process_State, type Process } from '../../gateway/src/gen/ai/h2o/engine/v1/process.pb.ts';
import { PodExec } from '../../gateway/src/sandbox/pod-exec.ts';
import { ProcessRunner } from '../../gateway/src/sandbox/process-runner.ts';
import { ProcessStore } from '../../gateway/src/sandbox/process-store.ts';
import { ProcessSweeper } from '../../gateway/src/sandbox/process-sweeper.ts';
import { ResourceStore } from '../../gateway/src/store/store.ts';
import { objectName } from '../../gateway/src/store/names.ts';
import { startSandboxPod } from '../helpers/sandbox-pod.ts';
import { useCluster } from '../helpers/use-cluster.ts';

const cluster = useCluster({ nodes: { cpuNodes: 1, gpuNodes: 0, gpusPerNode: 0 } });
const NAMESPACE = 'sweep';
const ENGINE = 'workspaces/w/sandboxEngines/e1';

const owner = { objectName: objectName('w', 'e1') ?? '', uid: '' };
const target = { namespace: NAMESPACE, pod: sandboxPodName(owner.objectName), container: CONTAINER };

let processes: ProcessStore;
let sweeper: ProcessSweeper;
let runner: ProcessRunner;

function process(id: string, command: string, args: string[]): Process {
  return {
    name: `${ENGINE}/processes/${id}`,
    command,
    args,
    workingDirectory: '/',
    environmentVariables: {},
    secretEnvironmentVariables: {},
    state: Process_State.STATE_PENDING,
    exitCode: undefined,
    createTime: undefined,
    startTime: undefined,
    endTime: undefined,
  };
}

beforeAll(async () => {
  const { kubeConfig } = cluster();
  await cluster().kubectl(['apply', '-f', 'crds/']);
  await cluster().kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
  await kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NAMESPACE } } });
  // The engine the processes belong to (their owner: without it they would be collected).
  const engine = (await kubeConfig.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: NAMESPACE,
    plural: 'sandboxengines',
    body: {
      apiVersion: API_VERSION,
      kind: 'SandboxEngine',
      metadata: { name: owner.objectName, labels: { [WORKSPACE_LABEL]: 'w', [ID_LABEL]: 'e1' } },
      spec: {
        sandboxEngineImage: 'workspaces/w/sandboxEngineImages/i',
        sandboxEngineTemplate: 'workspaces/w/sandboxEngineTemplates/t',
      },
    },
  })) as { metadata: { uid: string } };
  owner.uid = engine.metadata.uid;
  // The pod the engine's name leads to, as the operator would name it.
  await startSandboxPod(cluster(), NAMESPACE, sandboxPodName(objectName('w', 'e1') ?? ''));
  const exec = new PodExec(kubeConfig);
  processes = new ProcessStore(kubeConfig, NAMESPACE);
  runner = new ProcessRunner({ exec, store: processes, onChange: () => Promise.resolve() });
  // Another replica's sweeper: it follows none of these processes.
  sweeper = new ProcessSweeper({
    processes,
    store: new ResourceStore(kubeConfig, NAMESPACE),
    exec,
    follows: () => false,
  });
}, 120_000);

test('a running process whose runner is gone is settled FAILED on the second look, with an explanation', async () => {
  const orphan = await processes.create(process('orphan', 'true', []), owner);
  // Its runner recorded the start, then stopped before the process left a pid behind.
  await processes.report(orphan.name, { state: 'STATE_RUNNING', startTime: new Date().toISOString() });
  expect(await sweeper.sweep()).toEqual([]);
  expect((await processes.get(orphan.name)).process.state).toBe(Process_State.STATE_RUNNING);
  expect(await sweeper.sweep()).toEqual([orphan.name]);
  const settled = await processes.get(orphan.name);
  expect(settled.process.state).toBe(Process_State.STATE_FAILED);
  expect(settled.process.endTime).toBeInstanceOf(Date);
  expect(Buffer.concat(settled.output.frames.map((f) => f.data)).toString()).toContain(
    'the gateway replica that ran it stopped',
  );
});

test('a process that still runs in its sandbox is left alone, however often it is looked at', async () => {
  const created = await processes.create(process('sleeper', 'sleep', ['30']), owner);
  await runner.start(created, target, new Date());
  expect(await sweeper.sweep()).toEqual([]);
  expect(await sweeper.sweep()).toEqual([]);
  expect((await processes.get(created.name)).process.state).toBe(Process_State.STATE_RUNNING);
  // Ended by a signal, its runner records it: the sweeper has nothing left to do.
  await runner.signal(created.name, 9, target);
  await runner.ended(created.name);
  const ended = await processes.get(created.name);
  expect(ended.process).toMatchObject({ state: Process_State.STATE_FAILED, exitCode: 137 });
  expect(await sweeper.sweep()).toEqual([]);
}, 60_000);
