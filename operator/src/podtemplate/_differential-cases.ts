/**
 * Test support: strategic merge patches of pod templates, each applied by kubectl and by
 * strategicMerge() in strategic-merge.test.ts, which must agree on the result or both refuse.
 * Every case is deterministic in kubectl (kubectl visits a patch's keys in random order, so no
 * case both adds to and deletes from one scalar list).
 */
import type { JsonObject, JsonValue } from './json.ts';

export interface DifferentialCase {
  name: string;
  original: JsonObject;
  patch: JsonObject;
}

/** A pod template as the operator builds it for a DAI engine. */
export const ENGINE_TEMPLATE: JsonObject = {
  metadata: {
    labels: { 'engine.h2o.ai/engine-uid': 'uid-1', 'engine.h2o.ai/engine-kind': 'DAIEngine' },
    annotations: { 'engine.h2o.ai/engine': 'w1.e1' },
  },
  spec: {
    imagePullSecrets: [{ name: 'regcred' }],
    containers: [
      {
        name: 'driverless-ai',
        image: 'registry.example.com/dai:1.10.6',
        args: ['--config', '/config/config.toml'],
        env: [
          { name: 'DRIVERLESS_AI_CONFIG_FILE', value: '/config/config.toml' },
          { name: 'HOME', value: '/data' },
        ],
        ports: [{ name: 'http', containerPort: 12345, protocol: 'TCP' }],
        resources: {
          requests: { cpu: '1', memory: '1073741824' },
          limits: { cpu: '1', memory: '1073741824' },
        },
        volumeMounts: [
          { name: 'data', mountPath: '/data' },
          { name: 'config', mountPath: '/config', readOnly: true },
        ],
      },
    ],
    volumes: [{ name: 'config', configMap: { name: 'dai-e1' } }],
  },
};

/** The engine template with scheduling, security and more lists set. */
export const RICH_TEMPLATE: JsonObject = with_(ENGINE_TEMPLATE, {
  metadata: { finalizers: ['a.example.com/x', 'b.example.com/y'] },
  spec: {
    initContainers: [{ name: 'init-data', image: 'busybox', command: ['sh', '-c', 'true'] }],
    tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'engines', effect: 'NoSchedule' }],
    nodeSelector: { pool: 'engines', zone: 'a' },
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In', values: ['engines'] }] }],
        },
      },
    },
    securityContext: { runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000 },
    hostAliases: [{ ip: '10.0.0.1', hostnames: ['license.internal'] }],
    topologySpreadConstraints: [
      {
        topologyKey: 'zone',
        maxSkew: 1,
        whenUnsatisfiable: 'ScheduleAnyway',
        labelSelector: { matchLabels: { a: 'b' } },
      },
    ],
    dnsConfig: { options: [{ name: 'ndots', value: '2' }] },
  },
});

/** `base` with the fields of `extra` set in its metadata and spec; null removes a field. */
function with_(base: JsonObject, extra: { metadata?: JsonObject; spec?: JsonObject }): JsonObject {
  const copy = JSON.parse(JSON.stringify(base)) as { metadata: JsonObject; spec: JsonObject };
  const merge = (fields: JsonObject, more: JsonObject = {}): JsonObject =>
    Object.fromEntries(Object.entries({ ...fields, ...more }).filter(([, value]) => value !== null));
  return { metadata: merge(copy.metadata, extra.metadata), spec: merge(copy.spec, extra.spec) };
}

/** The engine template with its one container replaced by `container` merged over it. */
function withContainer(container: JsonObject): JsonObject {
  const copy = JSON.parse(JSON.stringify(ENGINE_TEMPLATE)) as { spec: { containers: JsonObject[] } };
  copy.spec.containers = [{ ...copy.spec.containers[0], ...container }];
  return copy;
}

const MAIN = 'driverless-ai';
const spec = (fields: JsonObject): JsonObject => ({ spec: fields });
const main = (fields: JsonObject): JsonObject => spec({ containers: [{ name: MAIN, ...fields }] });
const envVars = (count: number): JsonValue[] =>
  Array.from({ length: count }, (_, i) => ({ name: `VAR_${String(i).padStart(2, '0')}`, value: String(i) }));

export const DIFFERENTIAL_CASES: DifferentialCase[] = [
  // Objects and scalars.
  { name: 'an empty patch', original: ENGINE_TEMPLATE, patch: {} },
  {
    name: 'labels: one added, one deleted by null',
    original: ENGINE_TEMPLATE,
    patch: { metadata: { labels: { team: 'ml', 'engine.h2o.ai/engine-kind': null } } },
  },
  {
    name: 'annotations added to a template without them',
    original: with_(ENGINE_TEMPLATE, { metadata: { annotations: null } }),
    patch: { metadata: { annotations: { 'prometheus.io/scrape': 'true' } } },
  },
  { name: 'spec: null removes the spec', original: ENGINE_TEMPLATE, patch: { spec: null } },
  {
    name: '$patch: replace on the whole template',
    original: ENGINE_TEMPLATE,
    patch: { $patch: 'replace', spec: { containers: [{ name: 'only', image: 'x' }] } },
  },
  {
    name: '$patch: delete on metadata leaves it empty',
    original: ENGINE_TEMPLATE,
    patch: { metadata: { $patch: 'delete' } },
  },
  {
    name: 'a scalar replaced by an object',
    original: RICH_TEMPLATE,
    patch: spec({ nodeSelector: 'zone-a' }),
  },
  {
    name: 'an unknown field only in the patch is added',
    original: ENGINE_TEMPLATE,
    patch: spec({ futureField: { a: 1 } }),
  },
  {
    name: 'an unknown field that is an object on both sides is refused',
    original: with_(ENGINE_TEMPLATE, { spec: { futureField: { a: 1 } } }),
    patch: spec({ futureField: { b: 2 } }),
  },
  {
    name: 'field names match case-insensitively, as in encoding/json',
    original: with_(ENGINE_TEMPLATE, { spec: { Containers: [{ name: 'a', image: 'x' }] } }),
    patch: spec({ Containers: [{ name: 'b', image: 'y' }] }),
  },
  {
    name: '$retainKeys on the spec clears the fields it does not list',
    original: RICH_TEMPLATE,
    patch: spec({ $retainKeys: ['containers', 'nodeSelector'], nodeSelector: { pool: 'gpu' } }),
  },
  {
    name: '$retainKeys that leaves out a patched field is refused',
    original: RICH_TEMPLATE,
    patch: spec({ $retainKeys: ['containers'], nodeSelector: { pool: 'gpu' } }),
  },
  {
    name: '$retainKeys that is not a list is refused',
    original: RICH_TEMPLATE,
    patch: spec({ $retainKeys: 'containers' }),
  },
  {
    name: '$patch: merge on an object is refused',
    original: RICH_TEMPLATE,
    patch: spec({ nodeSelector: { $patch: 'merge', a: 'b' } }),
  },
  {
    name: 'an unknown $patch on an object is refused',
    original: RICH_TEMPLATE,
    patch: spec({ affinity: { $patch: 'keep' } }),
  },

  // Maps.
  {
    name: 'nodeSelector: one added, one deleted by null',
    original: RICH_TEMPLATE,
    patch: spec({ nodeSelector: { gpu: 'true', zone: null } }),
  },
  {
    name: 'nodeSelector: $patch: replace',
    original: RICH_TEMPLATE,
    patch: spec({ nodeSelector: { $patch: 'replace', pool: 'gpu' } }),
  },
  {
    name: 'nodeSelector: $patch: delete leaves it empty',
    original: RICH_TEMPLATE,
    patch: spec({ nodeSelector: { $patch: 'delete' } }),
  },
  {
    name: 'affinity added where the template has none',
    original: ENGINE_TEMPLATE,
    patch: spec({
      affinity: {
        podAntiAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            {
              weight: 100,
              podAffinityTerm: {
                topologyKey: 'kubernetes.io/hostname',
                labelSelector: { matchLabels: { app: 'dai' } },
              },
            },
          ],
        },
      },
    }),
  },
  {
    name: 'affinity: atomic nodeSelectorTerms replaced, podAffinity added',
    original: RICH_TEMPLATE,
    patch: spec({
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: 'gpu', operator: 'Exists' }] }],
          },
        },
        podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'zone' }] },
      },
    }),
  },
  {
    name: 'affinity: $patch: delete leaves it empty',
    original: RICH_TEMPLATE,
    patch: spec({ affinity: { $patch: 'delete' } }),
  },
  {
    name: 'affinity: $patch: delete where there is none adds nothing',
    original: ENGINE_TEMPLATE,
    patch: spec({ affinity: { $patch: 'delete' } }),
  },
  {
    name: 'pod securityContext: fields set, one deleted by null',
    original: RICH_TEMPLATE,
    patch: spec({
      securityContext: {
        runAsNonRoot: true,
        fsGroup: 2000,
        runAsGroup: null,
        seccompProfile: { type: 'RuntimeDefault' },
      },
    }),
  },
  {
    name: 'dnsConfig options are atomic',
    original: RICH_TEMPLATE,
    patch: spec({ dnsConfig: { options: [{ name: 'single-request-reopen' }], searches: ['svc.local'] } }),
  },

  // Containers, merged by name.
  {
    name: 'containers: image changed by name',
    original: ENGINE_TEMPLATE,
    patch: main({ image: 'registry.example.com/dai:1.11.0' }),
  },
  {
    name: 'containers: a sidecar added goes first',
    original: ENGINE_TEMPLATE,
    patch: spec({ containers: [{ name: 'proxy', image: 'envoy', ports: [{ containerPort: 9901 }] }] }),
  },
  {
    name: 'containers: deleted with $patch: delete',
    original: RICH_TEMPLATE,
    patch: spec({ containers: [{ name: MAIN, $patch: 'delete' }] }),
  },
  {
    name: 'containers: deleting an absent name changes nothing',
    original: ENGINE_TEMPLATE,
    patch: spec({ containers: [{ name: 'absent', $patch: 'delete' }] }),
  },
  {
    name: 'containers: $patch: replace replaces the whole list',
    original: ENGINE_TEMPLATE,
    patch: spec({
      containers: [
        { $patch: 'replace' },
        { name: 'solo', image: 'x', env: [{ name: 'A', $patch: 'delete' }] },
      ],
    }),
  },
  {
    name: 'containers: an element without its name is refused',
    original: ENGINE_TEMPLATE,
    patch: spec({ containers: [{ image: 'x' }] }),
  },
  {
    name: 'containers: a deletion without a name is refused',
    original: ENGINE_TEMPLATE,
    patch: spec({ containers: [{ $patch: 'delete' }] }),
  },
  {
    name: 'containers: duplicate names in the patch merge into one element',
    original: ENGINE_TEMPLATE,
    patch: spec({
      containers: [
        { name: 'side', image: 'a' },
        { name: MAIN, image: 'b' },
        { name: 'side', args: ['x'] },
      ],
    }),
  },
  {
    name: 'containers: with duplicate names in the original the first is patched',
    original: with_(ENGINE_TEMPLATE, {
      spec: { containers: [{ name: 'c', image: '1' }, { name: 'd' }, { name: 'c', image: '2' }] },
    }),
    patch: spec({ containers: [{ name: 'c', image: '3' }, { name: 'e' }] }),
  },
  {
    name: 'containers: an added element keeps its nulls and directives as they are',
    original: ENGINE_TEMPLATE,
    patch: spec({
      containers: [
        { name: 'side', image: null, $retainKeys: ['name'], env: [{ name: 'X', $patch: 'delete' }] },
      ],
    }),
  },
  {
    name: 'containers: $patch: merge on an element is refused',
    original: ENGINE_TEMPLATE,
    patch: spec({ containers: [{ name: MAIN, $patch: 'merge' }] }),
  },
  {
    name: 'containers: an unknown $patch on an element is refused',
    original: ENGINE_TEMPLATE,
    patch: spec({ containers: [{ name: MAIN, $patch: 'remove' }] }),
  },
  {
    name: 'containers: an object instead of the list replaces it',
    original: ENGINE_TEMPLATE,
    patch: spec({ containers: { name: 'x' } }),
  },
  {
    name: 'containers: a list of scalars cannot merge into objects',
    original: ENGINE_TEMPLATE,
    patch: spec({ containers: ['sidecar'] }),
  },
  {
    name: 'containers[].env: added, changed and deleted by name',
    original: ENGINE_TEMPLATE,
    patch: main({
      env: [
        { name: 'DRIVERLESS_AI_LICENSE_FILE', value: '/license/license.sig' },
        { name: 'HOME', value: '/home/dai' },
        { name: 'DRIVERLESS_AI_CONFIG_FILE', $patch: 'delete' },
      ],
    }),
  },
  {
    name: 'containers[].env: value turned into valueFrom',
    original: ENGINE_TEMPLATE,
    patch: main({
      env: [{ name: 'HOME', value: null, valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
    }),
  },
  {
    name: 'containers[].env: added to a container without env',
    original: with_(ENGINE_TEMPLATE, { spec: { containers: [{ name: MAIN, image: 'x' }] } }),
    patch: main({
      env: [
        { name: 'A', value: '1' },
        { name: 'B', $patch: 'delete' },
        { name: 'C', value: null },
      ],
    }),
  },
  {
    name: 'containers[].env: an element without its name is refused',
    original: ENGINE_TEMPLATE,
    patch: main({ env: [{ value: 'x' }] }),
  },
  {
    name: 'containers[].envFrom is atomic',
    original: withContainer({ envFrom: [{ configMapRef: { name: 'a' } }] }),
    patch: main({ envFrom: [{ secretRef: { name: 'b' } }] }),
  },
  {
    name: 'containers[].volumeMounts: one added, one changed by mountPath',
    original: ENGINE_TEMPLATE,
    patch: main({
      volumeMounts: [
        { name: 'license', mountPath: '/license', readOnly: true },
        { mountPath: '/config', readOnly: false },
      ],
    }),
  },
  {
    name: 'containers[].volumeMounts: a new volume at an existing mountPath takes it over',
    original: ENGINE_TEMPLATE,
    patch: main({ volumeMounts: [{ name: 'scratch', mountPath: '/data' }] }),
  },
  {
    name: 'containers[].volumeMounts: an element without mountPath is refused',
    original: ENGINE_TEMPLATE,
    patch: main({ volumeMounts: [{ name: 'license' }] }),
  },
  {
    name: 'containers[].ports: one added, one renamed by containerPort',
    original: ENGINE_TEMPLATE,
    patch: main({
      ports: [
        { containerPort: 8080, name: 'metrics' },
        { containerPort: 12345, name: 'web' },
      ],
    }),
  },
  {
    name: 'containers[].ports: the same port over UDP overwrites the TCP one (the key is containerPort alone)',
    original: ENGINE_TEMPLATE,
    patch: main({ ports: [{ containerPort: 12345, protocol: 'UDP' }] }),
  },
  { name: 'containers[].args are atomic', original: ENGINE_TEMPLATE, patch: main({ args: ['--verbose'] }) },
  {
    name: 'containers[].args: $deleteFromPrimitiveList removes values even from an atomic list',
    original: ENGINE_TEMPLATE,
    patch: main({ '$deleteFromPrimitiveList/args': ['--config'] }),
  },
  {
    name: 'containers[].command added where absent',
    original: ENGINE_TEMPLATE,
    patch: main({ command: ['/entrypoint.sh'] }),
  },
  {
    name: 'containers[].resources: GPU limit added, memory request changed, cpu limit deleted',
    original: ENGINE_TEMPLATE,
    patch: main({ resources: { limits: { 'nvidia.com/gpu': '1', cpu: null }, requests: { memory: '2Gi' } } }),
  },
  {
    name: 'containers[].resources.claims are replaced: they declare no patch strategy',
    original: withContainer({ resources: { claims: [{ name: 'gpu' }, { name: 'fpga' }] } }),
    patch: main({ resources: { claims: [{ name: 'nic' }] } }),
  },
  {
    name: 'containers[].securityContext: capabilities are atomic lists',
    original: withContainer({
      securityContext: { capabilities: { add: ['NET_ADMIN'], drop: ['ALL'] }, privileged: false },
    }),
    patch: main({ securityContext: { capabilities: { add: ['SYS_PTRACE'] }, readOnlyRootFilesystem: true } }),
  },
  {
    name: 'containers[].livenessProbe added',
    original: ENGINE_TEMPLATE,
    patch: main({ livenessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 10 } }),
  },

  // Other lists of the pod.
  {
    name: 'initContainers added where the template has none',
    original: ENGINE_TEMPLATE,
    patch: spec({
      initContainers: [{ name: 'fix-perms', image: 'busybox', command: ['chown', '1000', '/data'] }],
    }),
  },
  {
    name: 'initContainers merged by name',
    original: RICH_TEMPLATE,
    patch: spec({
      initContainers: [
        { name: 'init-data', image: 'alpine' },
        { name: 'second', image: 'x' },
      ],
    }),
  },
  {
    name: 'ephemeralContainers added',
    original: ENGINE_TEMPLATE,
    patch: spec({ ephemeralContainers: [{ name: 'debug', image: 'busybox', targetContainerName: MAIN }] }),
  },
  {
    name: 'imagePullSecrets: one added goes first',
    original: ENGINE_TEMPLATE,
    patch: spec({ imagePullSecrets: [{ name: 'mirror' }, { name: 'regcred' }, { name: 'other' }] }),
  },
  {
    name: 'imagePullSecrets: $patch: replace',
    original: ENGINE_TEMPLATE,
    patch: spec({ imagePullSecrets: [{ name: 'mirror' }, { $patch: 'replace' }] }),
  },
  {
    name: 'volumes: an emptyDir volume added',
    original: ENGINE_TEMPLATE,
    patch: spec({ volumes: [{ name: 'scratch', emptyDir: { medium: 'Memory', sizeLimit: '1Gi' } }] }),
  },
  {
    name: 'volumes: a new source without $retainKeys keeps the old one too',
    original: ENGINE_TEMPLATE,
    patch: spec({ volumes: [{ name: 'config', secret: { secretName: 'dai-secret' } }] }),
  },
  {
    name: 'volumes: $retainKeys switches a volume from configMap to secret',
    original: ENGINE_TEMPLATE,
    patch: spec({
      volumes: [
        {
          name: 'config',
          $retainKeys: ['name', 'secret'],
          secret: { secretName: 'dai-secret', defaultMode: 420 },
        },
      ],
    }),
  },
  {
    name: 'volumes: $patch: replace on one element replaces the whole list',
    original: with_(ENGINE_TEMPLATE, {
      spec: {
        volumes: [
          { name: 'config', configMap: { name: 'c' } },
          { name: 'data', emptyDir: {} },
        ],
      },
    }),
    patch: spec({ volumes: [{ name: 'config', $patch: 'replace', secret: { secretName: 's' } }] }),
  },
  {
    name: 'volumes: deleted with $patch: delete',
    original: ENGINE_TEMPLATE,
    patch: spec({ volumes: [{ name: 'config', $patch: 'delete' }] }),
  },
  {
    name: 'volumes added where the template has none',
    original: with_(ENGINE_TEMPLATE, { spec: { volumes: null } }),
    patch: spec({
      volumes: [
        { name: 'license', secret: { secretName: 'dai-license' } },
        { name: 'gone', $patch: 'delete' },
      ],
    }),
  },
  {
    name: 'tolerations are atomic: replaced',
    original: RICH_TEMPLATE,
    patch: spec({ tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }] }),
  },
  {
    name: 'tolerations: a $patch: delete element is taken as it is, replacing the list',
    original: RICH_TEMPLATE,
    patch: spec({ tolerations: [{ key: 'dedicated', $patch: 'delete' }] }),
  },
  {
    name: 'tolerations added where absent lose their directive elements',
    original: ENGINE_TEMPLATE,
    patch: spec({
      tolerations: [
        { key: 'a', operator: 'Exists' },
        { key: 'b', $patch: 'delete' },
      ],
    }),
  },
  {
    name: 'hostAliases merged by ip, hostnames replaced',
    original: RICH_TEMPLATE,
    patch: spec({
      hostAliases: [
        { ip: '10.0.0.1', hostnames: ['license.example.com'] },
        { ip: '10.0.0.2', hostnames: ['db'] },
      ],
    }),
  },
  {
    name: 'topologySpreadConstraints merged by topologyKey',
    original: RICH_TEMPLATE,
    patch: spec({
      topologySpreadConstraints: [
        { topologyKey: 'zone', maxSkew: 2 },
        { topologyKey: 'kubernetes.io/hostname', maxSkew: 1, whenUnsatisfiable: 'DoNotSchedule' },
      ],
    }),
  },
  {
    name: 'resourceClaims merged by name',
    original: with_(ENGINE_TEMPLATE, {
      spec: { resourceClaims: [{ name: 'gpu', resourceClaimName: 'gpu-claim' }] },
    }),
    patch: spec({
      resourceClaims: [
        { name: 'gpu', resourceClaimTemplateName: 'gpu-template', resourceClaimName: null },
        { name: 'nic', resourceClaimName: 'nic' },
      ],
    }),
  },
  {
    name: 'schedulingGates merged by name',
    original: with_(ENGINE_TEMPLATE, { spec: { schedulingGates: [{ name: 'quota' }] } }),
    patch: spec({ schedulingGates: [{ name: 'license' }, { name: 'quota', $patch: 'delete' }] }),
  },

  // Scalar lists with the merge strategy.
  {
    name: 'finalizers merge as a set, new ones first',
    original: RICH_TEMPLATE,
    patch: { metadata: { finalizers: ['c.example.com/z', 'a.example.com/x'] } },
  },
  {
    name: 'finalizers: $deleteFromPrimitiveList',
    original: RICH_TEMPLATE,
    patch: { metadata: { '$deleteFromPrimitiveList/finalizers': ['a.example.com/x', 'absent'] } },
  },
  {
    name: 'finalizers: $deleteFromPrimitiveList: null deletes the list',
    original: RICH_TEMPLATE,
    patch: { metadata: { '$deleteFromPrimitiveList/finalizers': null } },
  },
  {
    name: 'finalizers: $deleteFromPrimitiveList on an absent list changes nothing',
    original: ENGINE_TEMPLATE,
    patch: { metadata: { '$deleteFromPrimitiveList/finalizers': ['x'] } },
  },
  {
    name: 'finalizers of mixed types are refused',
    original: RICH_TEMPLATE,
    patch: { metadata: { finalizers: [1] } },
  },
  {
    name: 'finalizers holding lists are refused',
    original: RICH_TEMPLATE,
    patch: { metadata: { finalizers: [['x']] } },
  },
  {
    name: 'a $deleteFromPrimitiveList key without a field is refused',
    original: RICH_TEMPLATE,
    patch: { metadata: { $deleteFromPrimitiveList: ['x'] } },
  },

  // $setElementOrder.
  {
    name: '$setElementOrder/containers reorders the list',
    original: with_(ENGINE_TEMPLATE, { spec: { containers: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] } }),
    patch: spec({
      '$setElementOrder/containers': [{ name: 'c' }, { name: 'a' }, { name: 'b' }],
      containers: [{ name: 'a', image: 'x' }],
    }),
  },
  {
    name: '$setElementOrder/env places an added variable',
    original: ENGINE_TEMPLATE,
    patch: main({
      '$setElementOrder/env': [{ name: 'DRIVERLESS_AI_CONFIG_FILE' }, { name: 'NEW' }, { name: 'HOME' }],
      env: [{ name: 'NEW', value: 'x' }],
    }),
  },
  {
    name: '$setElementOrder that contradicts the patch is refused',
    original: with_(ENGINE_TEMPLATE, { spec: { containers: [{ name: 'a' }, { name: 'b' }] } }),
    patch: spec({
      '$setElementOrder/containers': [{ name: 'a' }, { name: 'b' }],
      containers: [
        { name: 'b', image: 'x' },
        { name: 'a', image: 'y' },
      ],
    }),
  },
  {
    name: '$setElementOrder that lists nothing leaves additions where kubectl puts them',
    original: with_(ENGINE_TEMPLATE, { spec: { containers: [{ name: 'a' }, { name: 'b' }] } }),
    patch: spec({
      '$setElementOrder/containers': [],
      containers: [{ name: 'n1' }, { name: 'b', image: 'x' }, { name: 'n2' }],
    }),
  },
  {
    name: '$setElementOrder with a deletion and re-addition',
    original: with_(ENGINE_TEMPLATE, {
      spec: { containers: [{ name: 'a' }, { name: 'b' }, { name: 'c' }, { name: 'd' }] },
    }),
    patch: spec({
      '$setElementOrder/containers': [],
      containers: [
        { name: 'b', $patch: 'delete' },
        { name: 'n' },
        { name: 'b', image: 'again' },
        { name: 'm' },
      ],
    }),
  },
  {
    name: '$setElementOrder on a scalar list',
    original: RICH_TEMPLATE,
    patch: {
      metadata: {
        '$setElementOrder/finalizers': ['b.example.com/y', 'n', 'a.example.com/x'],
        finalizers: ['n'],
      },
    },
  },
  {
    name: '$setElementOrder for a list absent from the patch reorders the original',
    original: with_(ENGINE_TEMPLATE, { spec: { containers: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] } }),
    patch: spec({ '$setElementOrder/containers': [{ name: 'b' }, { name: 'c' }] }),
  },
  {
    name: '$setElementOrder for a list only in the patch',
    original: ENGINE_TEMPLATE,
    patch: spec({
      '$setElementOrder/initContainers': [{ name: 'y' }, { name: 'x' }],
      initContainers: [{ name: 'x' }, { name: 'y' }, { name: 'z', $patch: 'delete' }],
    }),
  },
  {
    name: '$setElementOrder for an unknown field is refused',
    original: ENGINE_TEMPLATE,
    patch: spec({ '$setElementOrder/sidecars': [{ name: 'a' }] }),
  },
  {
    name: '$setElementOrder that is not a list is refused',
    original: ENGINE_TEMPLATE,
    patch: spec({ '$setElementOrder/containers': { name: 'a' } }),
  },
  {
    name: "a long list: unlisted additions among 25 variables, ordered by Go's stable sort",
    original: withContainer({ env: envVars(25) }),
    patch: main({
      '$setElementOrder/env': [],
      env: [
        { name: 'NEW_1', value: 'n' },
        { name: 'VAR_24', value: 'changed' },
        { name: 'NEW_2', value: 'n' },
        { name: 'VAR_03', $patch: 'delete' },
      ],
    }),
  },
  {
    name: 'a long list: additions to 25 variables',
    original: withContainer({ env: envVars(25) }),
    patch: main({
      env: [
        { name: 'VAR_10', value: 'x' },
        { name: 'NEW', value: 'n' },
        { name: 'VAR_02', value: 'y' },
      ],
    }),
  },
];
