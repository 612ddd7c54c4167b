import { ApiError } from '../errors/api-error.ts';
import { Port_State } from '../gen/ai/h2o/engine/v1/port.pb.ts';
import {
  internalUrl,
  parsePortName,
  portIngressObject,
  portMask,
  portMessage,
  portNumber,
  portObject,
  portObjectName,
  portServiceName,
  portServiceObject,
  portState,
  publicEndpoint,
  updatedSpec,
} from './ports.ts';

const key = { workspace: 'w1', engineId: 'e1', engineObject: 'w1.e1', engineUid: 'uid-1', port: 8080 };

describe('port ids and names', () => {
  test.each(['1024', '8080', '65535'])('%s is a port', (id) => {
    expect(portNumber(id)).toBe(Number(id));
  });

  test.each(['80', '1023', '65536', '08080', 'http', '', '8080.0'])(
    '"%s" is INVALID_ARGUMENT naming port_id',
    (id) => {
      expect(() => portNumber(id)).toThrow(ApiError);
      expect(() => portNumber(id)).toThrow(/port_id/);
    },
  );

  test('a port name splits into its engine and number', () => {
    expect(parsePortName('workspaces/w1/sandboxEngines/e1/ports/8080')).toEqual({
      engineName: 'workspaces/w1/sandboxEngines/e1',
      port: 8080,
    });
    expect(() => parsePortName('workspaces/w1/sandboxEngines/e1/ports/80')).toThrow(ApiError);
    expect(() => parsePortName('workspaces/w1/sandboxEngines/e1')).toThrow(ApiError);
  });

  test('object names are unique per engine and port; the Service name is a DNS label', () => {
    expect(portObjectName(key)).toBe('w1.e1.8080');
    expect(portObjectName({ ...key, port: 9000 })).not.toBe(portObjectName(key));
    expect(portServiceName(key)).toMatch(/^sbx-[0-9a-f]{16}-p8080$/);
    expect(portServiceName({ ...key, engineObject: 'w1.e2' })).not.toBe(portServiceName(key));
  });
});

describe('URLs', () => {
  test('internal: the Service in cluster DNS with the port', () => {
    expect(internalUrl(key, 'ns')).toBe(`http://${portServiceName(key)}.ns.svc.cluster.local:8080`);
  });

  test('public: a host per port under the base host, keeping scheme and port', () => {
    expect(publicEndpoint(key, 'https://ports.example.com').url).toBe(
      `https://${portServiceName(key)}.ports.example.com/`,
    );
    expect(publicEndpoint(key, 'http://ports.example.com:8443/x').url).toBe(
      `http://${portServiceName(key)}.ports.example.com:8443/`,
    );
  });
});

describe('objects', () => {
  test('the Port is labelled and owned by the engine', () => {
    const object = portObject(key, { displayName: 'web', public: false }) as {
      metadata: { labels: Record<string, string>; ownerReferences: { kind: string; uid: string }[] };
    };
    expect(object.metadata.labels).toMatchObject({
      'engine.h2o.ai/workspace': 'w1',
      'engine.h2o.ai/sandbox-engine': 'e1',
      'engine.h2o.ai/port': '8080',
      'engine.h2o.ai/engine-uid': 'uid-1',
    });
    expect(object.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'SandboxEngine', uid: 'uid-1' }),
    ]);
  });

  test("the Service selects the engine's pod on the port and is owned by the Port", () => {
    const service = portServiceObject(key, 'port-uid') as {
      metadata: { ownerReferences: { kind: string; uid: string }[] };
      spec: { selector: Record<string, string>; ports: { port: number; targetPort: number }[] };
    };
    expect(service.spec.selector).toEqual({ 'engine.h2o.ai/engine-uid': 'uid-1' });
    expect(service.spec.ports).toEqual([expect.objectContaining({ port: 8080, targetPort: 8080 })]);
    expect(service.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Port', uid: 'port-uid' }),
    ]);
  });

  test('the Ingress routes the public host to the Service', () => {
    const ingress = portIngressObject(key, 'port-uid', {
      url: 'https://ports.example.com',
      ingressClassName: 'nginx',
    }) as {
      spec: { ingressClassName: string; rules: { host: string }[] };
    };
    expect(ingress.spec.ingressClassName).toBe('nginx');
    expect(ingress.spec.rules[0]?.host).toBe(`${portServiceName(key)}.ports.example.com`);
  });
});

describe('portState()', () => {
  const seen = {
    deleting: false,
    serviceExists: true,
    ingressExists: false,
    public: false,
    podReady: true,
    failureReason: '',
  };
  test.each([
    ['everything in place', seen, Port_State.STATE_READY],
    ['the pod not ready', { ...seen, podReady: false }, Port_State.STATE_PENDING],
    ['no Service yet', { ...seen, serviceExists: false }, Port_State.STATE_PENDING],
    ['public without its Ingress', { ...seen, public: true }, Port_State.STATE_PENDING],
    ['public with its Ingress', { ...seen, public: true, ingressExists: true }, Port_State.STATE_READY],
    ['a recorded failure', { ...seen, failureReason: 'no' }, Port_State.STATE_FAILED],
    ['being deleted', { ...seen, deleting: true, failureReason: 'no' }, Port_State.STATE_DELETING],
  ])('%s', (_what, observation, state) => {
    expect(portState(observation)).toBe(state);
  });
});

describe('portMessage()', () => {
  test('the public URL only while public; the failure reason only when FAILED', () => {
    const record = {
      spec: { displayName: 'web', public: false },
      status: { creator: 'users/u', failureReason: 'old' },
    };
    const urls = { internalUrl: 'http://i', publicUrl: 'https://p/' };
    const message = portMessage('n', record, urls, Port_State.STATE_READY);
    expect(message).toMatchObject({
      name: 'n',
      displayName: 'web',
      public: false,
      publicUrl: '',
      failureReason: '',
      creator: 'users/u',
    });
    expect(
      portMessage('n', { ...record, spec: { public: true } }, urls, Port_State.STATE_FAILED),
    ).toMatchObject({
      publicUrl: 'https://p/',
      failureReason: 'old',
    });
  });
});

describe('update masks', () => {
  test('display_name, public, both as a list or comma-joined, and *', () => {
    expect([...portMask(['public'])]).toEqual(['public']);
    expect([...portMask(['display_name,public'])].sort()).toEqual(['display_name', 'public']);
    expect([...portMask(['*'])].sort()).toEqual(['display_name', 'public']);
  });

  test('an empty mask or another field is INVALID_ARGUMENT naming update_mask', () => {
    expect(() => portMask([])).toThrow(/update_mask/);
    expect(() => portMask(['internal_url'])).toThrow(/update_mask/);
  });

  test('updatedSpec() takes only the masked fields', () => {
    const current = { spec: { displayName: 'old', public: true } };
    expect(updatedSpec(current, { displayName: 'new', public: false }, new Set(['display_name']))).toEqual({
      displayName: 'new',
      public: true,
    });
  });
});
