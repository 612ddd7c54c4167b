import { daiEngineKind } from '../kinds/dai-engine.ts';
import { h2oEngineKind } from '../kinds/h2o-engine.ts';
import type { NotebookEngineProfileInfo, SandboxEngineTemplateInfo } from '../gen/resources.ts';
import type { EngineKindName, EngineResource, EngineSpec, EngineStatus } from '../kinds/kind.ts';
import { notebookEngineKind } from '../kinds/notebook-engine.ts';
import { sandboxEngineKind } from '../kinds/sandbox-engine.ts';
import { PodTemplateError } from '../podtemplate/pod-template.ts';
import {
  clientServiceName,
  desiredObjects,
  FILES_DIGEST_ANNOTATION,
  wantedReplicas,
  workloadName,
} from './workload.ts';

const settings = { publicUrl: 'https://cloud.example.com/' };
const labels = { 'engine.h2o.ai/workspace': 'w', 'engine.h2o.ai/id': 'e1' };

function engine<K extends EngineKindName>(
  spec: EngineSpec<K>,
  status: EngineStatus<K> = {},
): EngineResource<K> {
  return {
    metadata: { name: 'w.e1', namespace: 'ns', uid: 'uid-1', labels },
    spec,
    status,
  };
}

const dai = (
  spec: EngineSpec<'DAIEngine'> = {},
  status: EngineStatus<'DAIEngine'> = {},
): EngineResource<'DAIEngine'> =>
  engine<'DAIEngine'>(
    {
      daiEngineVersion: 'workspaces/global/daiEngineVersions/1.10.6',
      cpu: 2,
      gpu: 0,
      memoryBytes: '4096',
      storageBytes: '8192',
      ...spec,
    },
    {
      daiEngineVersionInfo: {
        image: 'dai:1.10.6',
        imagePullPolicy: 'IMAGE_PULL_POLICY_ALWAYS',
        imagePullSecrets: ['regcred'],
      },
      profileInfo: {},
      ...status,
    },
  );

const h2o = engine<'H2OEngine'>(
  { nodeCount: 3, cpu: 1, memoryBytes: '1024' },
  {
    h2oEngineVersionInfo: { image: 'h2o:3' },
    profileInfo: { javaOptions: '-Xss4m', h2oOptions: '-nthreads 4', javaClasspath: '/opt/extra.jar' },
  },
);

const notebook = (profileInfo: NotebookEngineProfileInfo = {}): EngineResource<'NotebookEngine'> =>
  engine<'NotebookEngine'>(
    { storageBytes: '2048' },
    { notebookImageInfo: { image: 'jupyter:1' }, storageClassName: 'fast', profileInfo },
  );

const sandbox = (template: SandboxEngineTemplateInfo = {}): EngineResource<'SandboxEngine'> =>
  engine<'SandboxEngine'>(
    { sandboxEngineImage: 'workspaces/global/sandboxEngineImages/python' },
    {
      sandboxEngineImageInfo: {
        image: 'python:3.12-slim',
        imagePullPolicy: 'IMAGE_PULL_POLICY_IF_NOT_PRESENT',
      },
      sandboxEngineTemplateInfo: {
        milliCpuRequest: 250,
        milliCpuLimit: 500,
        memoryBytesRequest: '536870912',
        memoryBytesLimit: '1073741824',
        storageBytes: '2147483648',
        environmentalVariables: { GREETING: 'hello' },
        maxIdleDuration: '3600s',
        maxRunningDuration: '0s',
        ...template,
      },
    },
  );

describe('sandbox engines', () => {
  test('run as a non-root user on a read-only root without capabilities, writing only to scratch volumes', () => {
    const { statefulSet, service } = desiredObjects(sandboxEngineKind, sandbox(), {
      ...settings,
      sandboxRuntimeClassName: 'gvisor',
    });
    const pod = statefulSet.spec?.template.spec;
    expect(pod?.runtimeClassName).toBe('gvisor');
    expect(pod?.automountServiceAccountToken).toBe(false);
    const container = pod?.containers[0];
    expect(container).toMatchObject({
      name: 'sandbox',
      image: 'python:3.12-slim',
      imagePullPolicy: 'IfNotPresent',
      securityContext: {
        allowPrivilegeEscalation: false,
        runAsNonRoot: true,
        runAsUser: 1000,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      },
      resources: {
        requests: { cpu: '250m', memory: '536870912' },
        limits: { cpu: '500m', memory: '1073741824' },
      },
    });
    // No port and no probe: ports are exposed on request; the container runs, it is ready.
    expect(container?.ports).toBeUndefined();
    expect(container?.readinessProbe).toBeUndefined();
    expect(service.spec?.ports).toEqual([]);
    expect(container?.env).toEqual([
      { name: 'HOME', value: '/home/sandbox' },
      { name: 'GREETING', value: 'hello' },
    ]);
    expect(container?.volumeMounts?.map((m) => m.mountPath)).toEqual(['/workspace', '/home/sandbox', '/tmp']);
    expect(pod?.volumes).toContainEqual({ name: 'workspace', emptyDir: { sizeLimit: '2147483648' } });
  });

  test('a template without a CPU limit or requests: no CPU limit, memory requested as limited', () => {
    const { statefulSet } = desiredObjects(
      sandboxEngineKind,
      sandbox({ milliCpuLimit: 0, milliCpuRequest: 0, memoryBytesRequest: '0', storageBytes: '0' }),
      settings,
    );
    const pod = statefulSet.spec?.template.spec;
    expect(pod?.runtimeClassName).toBeUndefined();
    expect(pod?.containers[0]?.resources).toEqual({
      requests: { memory: '1073741824' },
      limits: { memory: '1073741824' },
    });
    expect(pod?.volumes).toContainEqual({ name: 'workspace', emptyDir: {} });
  });

  test("a template's pod template customises the pod", () => {
    const { statefulSet } = desiredObjects(
      sandboxEngineKind,
      sandbox({
        yamlPodTemplateSpec: 'spec:\n  runtimeClassName: kata\n  nodeSelector:\n    pool: sandboxes\n',
      }),
      settings,
    );
    expect(statefulSet.spec?.template.spec).toMatchObject({
      runtimeClassName: 'kata',
      nodeSelector: { pool: 'sandboxes' },
    });
  });
});

describe('the Driverless AI license', () => {
  test('DAI engines mount the license Secret, optional, and are told where the file is', () => {
    const { statefulSet } = desiredObjects(daiEngineKind, dai(), {
      ...settings,
      daiLicenseSecret: 'dai-license',
    });
    const pod = statefulSet.spec?.template.spec;
    expect(pod?.volumes).toContainEqual({
      name: 'secret-files',
      secret: { secretName: 'dai-license', optional: true },
    });
    expect(pod?.containers[0]?.volumeMounts).toContainEqual({
      name: 'secret-files',
      mountPath: '/license',
      readOnly: true,
    });
    expect(pod?.containers[0]?.env).toContainEqual({
      name: 'DRIVERLESS_AI_LICENSE_FILE',
      value: '/license/license.sig',
    });
  });

  test('other engines, and DAI engines of an installation without a license, get none', () => {
    const withLicense = { ...settings, daiLicenseSecret: 'dai-license' };
    expect(
      desiredObjects(notebookEngineKind, engine({}, { notebookImageInfo: {}, profileInfo: {} }), withLicense)
        .statefulSet.spec?.template.spec?.volumes ?? [],
    ).not.toContainEqual(expect.objectContaining({ name: 'secret-files' }));
    const pod = desiredObjects(daiEngineKind, dai(), settings).statefulSet.spec?.template.spec;
    expect(pod?.volumes ?? []).not.toContainEqual(expect.objectContaining({ name: 'secret-files' }));
  });
});

describe('desiredObjects()', () => {
  test('a DAI engine is a one-pod StatefulSet with its image, resources, data claim, config and owner', () => {
    const { statefulSet, service, configMap } = desiredObjects(daiEngineKind, dai(), settings);
    const name = workloadName(daiEngineKind, dai());
    expect(name).toMatch(/^dai-[0-9a-f]{16}$/);
    expect(statefulSet.metadata).toMatchObject({
      name,
      namespace: 'ns',
      ownerReferences: [{ kind: 'DAIEngine', name: 'w.e1', uid: 'uid-1', controller: true }],
    });
    expect(statefulSet.spec?.replicas).toBe(1);
    expect(statefulSet.spec?.persistentVolumeClaimRetentionPolicy).toEqual({
      whenDeleted: 'Delete',
      whenScaled: 'Retain',
    });
    const pod = statefulSet.spec?.template.spec;
    expect(pod?.imagePullSecrets).toEqual([{ name: 'regcred' }]);
    expect(pod?.containers[0]).toMatchObject({
      image: 'dai:1.10.6',
      imagePullPolicy: 'Always',
      resources: { requests: { cpu: '2', memory: '4096' }, limits: { cpu: '2', memory: '4096' } },
      readinessProbe: { tcpSocket: { port: 12345 } },
      env: [{ name: 'DRIVERLESS_AI_CONFIG_FILE', value: '/etc/dai/config.toml' }],
    });
    expect(statefulSet.spec?.volumeClaimTemplates?.[0]?.spec?.resources?.requests).toEqual({
      storage: '8192',
    });
    expect(service.spec).toMatchObject({ clusterIP: 'None', ports: [{ port: 12345 }] });
    expect(configMap?.data?.['config.toml']).toContain('base_url = "/workspaces/w/daiEngines/e1/"');
  });

  test('a paused engine wants no pods but keeps its claim template', () => {
    const { statefulSet } = desiredObjects(daiEngineKind, dai({ paused: true }), settings);
    expect(statefulSet.spec?.replicas).toBe(0);
    expect(statefulSet.spec?.volumeClaimTemplates).toHaveLength(1);
  });

  test('a failed engine not resumed since wants no pods; a resume after the failure wants them back', () => {
    const failedAt = '2026-01-01T00:00:00.000Z';
    const failed: EngineStatus<'DAIEngine'> = {
      state: 'STATE_FAILED',
      conditions: [{ type: 'Failed', status: 'True', lastTransitionTime: failedAt, reason: 'EngineFailed' }],
    };
    expect(wantedReplicas(daiEngineKind, dai({}, failed))).toBe(0);
    expect(wantedReplicas(daiEngineKind, dai({}, { ...failed, resumeTime: '2026-01-01T00:00:01Z' }))).toBe(1);
  });

  test('GPUs are requested under the profile’s resource name, and only then do GPU tolerations apply', () => {
    const profileInfo = {
      gpuResourceName: 'amd.com/gpu',
      yamlGpuTolerations: '- key: amd.com/gpu\n  operator: Exists\n',
    };
    const gpu = desiredObjects(daiEngineKind, dai({ gpu: 2 }, { profileInfo }), settings).statefulSet;
    expect(gpu.spec?.template.spec?.containers[0]?.resources?.limits).toMatchObject({ 'amd.com/gpu': '2' });
    expect(gpu.spec?.template.spec?.tolerations).toEqual([{ key: 'amd.com/gpu', operator: 'Exists' }]);
    const cpu = desiredObjects(daiEngineKind, dai({ gpu: 0 }, { profileInfo }), settings).statefulSet;
    expect(cpu.spec?.template.spec?.tolerations).toBeUndefined();
    expect(Object.keys(cpu.spec?.template.spec?.containers[0]?.resources?.limits ?? {})).toEqual([
      'cpu',
      'memory',
    ]);
  });

  test('the profile’s pod template is merged into the pod', () => {
    const profileInfo = {
      yamlPodTemplateSpec: 'metadata:\n  labels:\n    team: a\nspec:\n  nodeSelector:\n    pool: dai\n',
    };
    const { statefulSet } = desiredObjects(daiEngineKind, dai({}, { profileInfo }), settings);
    expect(statefulSet.spec?.template.metadata?.labels).toMatchObject({
      team: 'a',
      'engine.h2o.ai/engine-uid': 'uid-1',
    });
    expect(statefulSet.spec?.template.spec?.nodeSelector).toEqual({ pool: 'dai' });
  });

  test('an invalid profile pod template is an error naming the field', () => {
    const profileInfo = { yamlPodTemplateSpec: 'spec: [' };
    expect(() => desiredObjects(daiEngineKind, dai({}, { profileInfo }), settings)).toThrow(PodTemplateError);
  });

  test('a change of configuration changes the pod template (so the pod restarts with it)', () => {
    const digest = (config: Record<string, string>): string | undefined =>
      desiredObjects(daiEngineKind, dai({ config }), settings).statefulSet.spec?.template.metadata
        ?.annotations?.[FILES_DIGEST_ANNOTATION];
    expect(digest({ a: '1' })).not.toBe(digest({ a: '2' }));
    expect(digest({ a: '1' })).toBe(digest({ a: '1' }));
  });

  test('an H2O engine runs nodeCount pods that know the cloud size, with no data volume and the profile’s Java options', () => {
    const { statefulSet, configMap } = desiredObjects(h2oEngineKind, h2o, settings);
    expect(configMap).toBeUndefined();
    expect(statefulSet.spec?.replicas).toBe(3);
    expect(statefulSet.spec?.volumeClaimTemplates).toBeUndefined();
    expect(
      desiredObjects(h2oEngineKind, { ...h2o, spec: { ...h2o.spec, terminated: true } }, settings).statefulSet
        .spec?.replicas,
    ).toBe(0);
  });

  test('a notebook engine mounts its home volume in the storage class of its profile, and syncs git only when asked', () => {
    const plain = desiredObjects(notebookEngineKind, notebook({}), settings).statefulSet;
    expect(plain.spec?.volumeClaimTemplates?.[0]?.spec?.storageClassName).toBe('fast');
    expect(plain.spec?.template.spec?.containers[0]?.volumeMounts).toEqual([
      { name: 'data', mountPath: '/home/jovyan' },
      { name: 'tmp', mountPath: '/tmp' },
    ]);
    expect(plain.spec?.template.spec?.containers[0]?.env?.map((e) => e.name)).toEqual(['NB_PREFIX', 'HOME']);
    const synced = desiredObjects(
      notebookEngineKind,
      notebook({
        syncGitRepositoryEnabled: true,
        gitRepository: 'https://git.example.com/r.git',
        gitRef: '',
        gitDirectoryName: '',
      }),
      settings,
    ).statefulSet;
    expect(synced.spec?.template.spec?.containers[0]?.env).toEqual([
      { name: 'NB_PREFIX', value: '/workspaces/w/notebookEngines/e1' },
      { name: 'HOME', value: '/home/jovyan' },
      { name: 'GIT_REPOSITORY', value: 'https://git.example.com/r.git' },
      { name: 'GIT_REF', value: 'HEAD' },
      { name: 'GIT_DIRECTORY_NAME', value: 'Example' },
    ]);
  });

  test('is deterministic: the same engine gives the same objects', () => {
    expect(desiredObjects(daiEngineKind, dai(), settings)).toEqual(
      desiredObjects(daiEngineKind, dai(), settings),
    );
  });
});

describe('engine NetworkPolicies', () => {
  const gateway = { podSelector: { matchLabels: { 'app.kubernetes.io/component': 'gateway' } } };
  const ingressController = {
    namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } },
  };
  const isolated = { ...settings, engineNetworkPeers: [gateway], publishedPortPeers: [ingressController] };
  const own = { podSelector: { matchLabels: { 'engine.h2o.ai/engine-uid': 'uid-1' } } };

  test('without peers configured there is no policy', () => {
    expect(desiredObjects(notebookEngineKind, notebook(), settings).networkPolicy).toBeUndefined();
  });

  test.each([
    ['DAI', daiEngineKind, dai(), 12345],
    ['H2O', h2oEngineKind, h2o, 54321],
    ['notebook', notebookEngineKind, notebook(), 8888],
  ])(
    '%s engines admit their own pods on every port and the gateway on the engine’s port, never the published ports’ peers',
    (_name, kind, resource, port) => {
      const policy = desiredObjects(kind, resource, isolated).networkPolicy;
      expect(policy?.spec).toEqual({
        podSelector: own.podSelector,
        policyTypes: ['Ingress'],
        ingress: [{ _from: [own] }, { _from: [gateway], ports: [{ port, protocol: 'TCP' }] }],
      });
    },
  );

  test('sandboxes, whose ports users publish, also admit the ingress controller, on any port', () => {
    const policy = desiredObjects(sandboxEngineKind, sandbox(), isolated).networkPolicy;
    expect(policy?.spec?.ingress).toEqual([{ _from: [own] }, { _from: [gateway, ingressController] }]);
    // Without the gateway's peers set there is no policy at all, whatever else is set.
    const { engineNetworkPeers: _unset, ...open } = isolated;
    expect(desiredObjects(sandboxEngineKind, sandbox(), open).networkPolicy).toBeUndefined();
  });
});

describe('H2O engines in H2O-3’s Kubernetes mode', () => {
  test('every node gets exactly the clustering environment H2O-3 reads, and the engine’s path', () => {
    const { statefulSet, service } = desiredObjects(h2oEngineKind, h2o, settings);
    expect(statefulSet.spec?.template.spec?.containers[0]?.env).toEqual([
      { name: 'JAVA_OPTS', value: '-Xss4m' },
      { name: 'H2O_OPTS', value: '-nthreads 4' },
      { name: 'CLASSPATH', value: '/opt/extra.jar' },
      {
        name: 'H2O_KUBERNETES_SERVICE_DNS',
        value: `${service.metadata?.name ?? ''}.ns.svc.cluster.local`,
      },
      { name: 'H2O_NODE_EXPECTED_COUNT', value: '3' },
      { name: 'H2O_NODE_LOOKUP_TIMEOUT', value: '180' },
      { name: 'H2O_KUBERNETES_API_PORT', value: '8081' },
      { name: 'H2O_NODE_MEMORY', value: '1024' },
      { name: 'H2O_CONTEXT_PATH', value: '/workspaces/w/h2oEngines/e1' },
    ]);
    expect(service.metadata?.name).toBe(workloadName(h2oEngineKind, h2o));
  });

  test('the context path is the path of the apiUrl, the public URL’s own path included', () => {
    const prefixed = { publicUrl: 'https://cloud.example.com/ai/' };
    const env = desiredObjects(h2oEngineKind, h2o, prefixed).statefulSet.spec?.template.spec?.containers[0]
      ?.env;
    expect(env).toContainEqual({ name: 'H2O_CONTEXT_PATH', value: '/ai/workspaces/w/h2oEngines/e1' });
    expect(h2oEngineKind.urls(h2o, prefixed)['apiUrl']).toBe(
      'https://cloud.example.com/ai/workspaces/w/h2oEngines/e1/',
    );
  });

  test('the nodes start together, are ready only as the leader of a formed cloud, and are never replaced one by one', () => {
    const { statefulSet } = desiredObjects(h2oEngineKind, h2o, settings);
    expect(statefulSet.spec?.podManagementPolicy).toBe('Parallel');
    expect(statefulSet.spec?.updateStrategy).toEqual({ type: 'OnDelete' });
    // One-pod engines roll to a changed template (a new DAI configuration restarts the engine).
    expect(desiredObjects(daiEngineKind, dai(), settings).statefulSet.spec?.updateStrategy).toBeUndefined();
    const [node] = statefulSet.spec?.template.spec?.containers ?? [];
    expect(node?.readinessProbe).toEqual({
      httpGet: { path: '/kubernetes/isLeaderNode', port: 8081 },
      periodSeconds: 3,
      successThreshold: 2,
      failureThreshold: 1,
    });
    // Readiness is asked only once the node's API is open, i.e. once it knows its cloud's members.
    expect(node?.startupProbe).toEqual({
      tcpSocket: { port: 54321 },
      periodSeconds: 2,
      failureThreshold: 120,
    });
  });

  test('the nodes find each other through a headless Service of not-ready pods; clients reach the leader through a Service of ready pods', () => {
    const { statefulSet, service, clientService } = desiredObjects(h2oEngineKind, h2o, settings);
    expect(statefulSet.spec?.serviceName).toBe(service.metadata?.name);
    expect(service.spec).toMatchObject({ clusterIP: 'None', publishNotReadyAddresses: true });
    expect(clientService?.metadata?.name).toBe(clientServiceName(h2oEngineKind, h2o));
    expect(clientService?.metadata?.ownerReferences).toEqual(service.metadata?.ownerReferences);
    expect(clientService?.spec).toEqual({
      type: 'ClusterIP',
      selector: { 'engine.h2o.ai/engine-uid': 'uid-1' },
      ports: [{ name: 'http', port: 54321, targetPort: 54321 }],
      publishNotReadyAddresses: false,
    });
  });

  test('other kinds have no Service of their own for clients', () => {
    expect(desiredObjects(daiEngineKind, dai(), settings).clientService).toBeUndefined();
    expect(desiredObjects(notebookEngineKind, notebook(), settings).clientService).toBeUndefined();
  });
});

describe('the user H2O and notebook engines run as', () => {
  test.each([
    ['H2O', h2oEngineKind, h2o],
    ['notebook', notebookEngineKind, notebook()],
  ])(
    '%s engines: uid 1000 with fsGroup 1000, a read-only root without capabilities, and a writable /tmp',
    (_kind, kind, given) => {
      const pod = desiredObjects(kind, given, settings).statefulSet.spec?.template.spec;
      expect(pod?.securityContext).toEqual({
        seccompProfile: { type: 'RuntimeDefault' },
        fsGroup: 1000,
        fsGroupChangePolicy: 'OnRootMismatch',
      });
      expect(pod?.containers[0]?.securityContext).toEqual({
        allowPrivilegeEscalation: false,
        runAsNonRoot: true,
        runAsUser: 1000,
        runAsGroup: 1000,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
      expect(pod?.volumes).toContainEqual({ name: 'tmp', emptyDir: {} });
      expect(pod?.containers[0]?.volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
    },
  );

  test('Driverless AI keeps its image’s user and a writable root', () => {
    const pod = desiredObjects(daiEngineKind, dai(), settings).statefulSet.spec?.template.spec;
    expect(pod?.securityContext).toEqual({ seccompProfile: { type: 'RuntimeDefault' } });
    expect(pod?.containers[0]?.securityContext).toEqual({ allowPrivilegeEscalation: false });
  });

  test('a profile’s pod template still overrides the user, the group and the read-only root', () => {
    const yamlPodTemplateSpec = [
      'spec:',
      '  securityContext:',
      '    fsGroup: 100',
      '  containers:',
      '  - name: notebook',
      '    securityContext:',
      '      runAsUser: 1001',
      '      runAsGroup: 100',
      '      readOnlyRootFilesystem: false',
    ].join('\n');
    const pod = desiredObjects(notebookEngineKind, notebook({ yamlPodTemplateSpec }), settings).statefulSet
      .spec?.template.spec;
    expect(pod?.securityContext).toMatchObject({ fsGroup: 100, seccompProfile: { type: 'RuntimeDefault' } });
    expect(pod?.containers[0]?.securityContext).toMatchObject({
      runAsUser: 1001,
      runAsGroup: 100,
      readOnlyRootFilesystem: false,
      runAsNonRoot: true,
    });
  });
});
