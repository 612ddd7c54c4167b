import { networkPeers } from './network-peers.ts';

describe('networkPeers()', () => {
  test("reads the chart's peers into the client's model, ipBlock.except included", () => {
    const text = JSON.stringify([
      { podSelector: { matchLabels: { 'app.kubernetes.io/component': 'gateway' } } },
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } },
      { ipBlock: { cidr: '10.0.0.0/8', except: ['10.1.0.0/16'] } },
      {
        namespaceSelector: {
          matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['aiem'] }],
        },
      },
    ]);
    expect(networkPeers(text)).toEqual([
      { podSelector: { matchLabels: { 'app.kubernetes.io/component': 'gateway' } } },
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } },
      { ipBlock: { cidr: '10.0.0.0/8', _except: ['10.1.0.0/16'] } },
      {
        namespaceSelector: {
          matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['aiem'] }],
        },
      },
    ]);
  });

  test('messages name the setting read', () => {
    expect(() => networkPeers('[{}]', 'AIEM_SANDBOX_PORTS_PEERS')).toThrow(
      /^AIEM_SANDBOX_PORTS_PEERS\[0\] must be a non-empty object/,
    );
    expect(() => networkPeers('{}', 'AIEM_SANDBOX_PORTS_PEERS')).toThrow(/^AIEM_SANDBOX_PORTS_PEERS must be/);
  });

  test('unset or empty means no NetworkPolicies', () => {
    expect(networkPeers(undefined)).toBeUndefined();
    expect(networkPeers(' ')).toBeUndefined();
  });

  test.each([
    ['{', /is not JSON/],
    ['{}', /must be a JSON array/],
    ['[{}]', /\[0\] must be a non-empty object/],
    ['[{"podSelector":{"matchLabel":{}}}]', /\[0\]\.podSelector has unknown fields: matchLabel/],
    ['[{"ipBlock":{}}]', /\[0\]\.ipBlock must have a cidr/],
    ['[{"ipBlock":{"cidr":"everywhere"}}]', /\[0\]\.ipBlock must have a cidr/],
    ['[{"ipBlock":{"cidr":"10.0.0.0/8"},"podSelector":{}}]', /\[0\]: an ipBlock stands alone/],
    [
      '[{"podSelector":{"matchLabels":{"a":1}}}]',
      /\[0\]\.podSelector\.matchLabels must map label names to strings/,
    ],
    [
      '[{"namespaceSelector":{"matchExpressions":[{"key":"a","operator":"Near"}]}}]',
      /matchExpressions\[0\] needs a key and an operator/,
    ],
    ['[{"podSelector":{}},{"nodeSelector":{}}]', /\[1\] has an unknown field: nodeSelector/],
  ])('refuses %s, saying where', (text, message) => {
    expect(() => networkPeers(text)).toThrow(message);
  });
});
