/**
 * The peers admitted to engines' ports (AIEM_ENGINE_NETWORK_PEERS): a JSON array of Kubernetes
 * NetworkPolicyPeer objects, as the chart renders them, read into client-node's model (which names
 * `ipBlock.except` `_except`). A malformed setting stops the operator at start with the reason,
 * rather than leaving engines unguarded or unreachable.
 */
import type { V1IPBlock, V1LabelSelector, V1NetworkPolicyPeer } from '@kubernetes/client-node';

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function selector(value: unknown, where: string): V1LabelSelector {
  if (!isObject(value)) throw new Error(`${where} must be a label selector object`);
  const unknown = Object.keys(value).filter((key) => key !== 'matchLabels' && key !== 'matchExpressions');
  if (unknown.length > 0) throw new Error(`${where} has unknown fields: ${unknown.join(', ')}`);
  return value;
}

function ipBlock(value: unknown, where: string): V1IPBlock {
  if (!isObject(value) || typeof value['cidr'] !== 'string') throw new Error(`${where} must have a cidr`);
  const except = value['except'];
  if (except !== undefined && !(Array.isArray(except) && except.every((e) => typeof e === 'string')))
    throw new Error(`${where}.except must be a list of CIDRs`);
  return { cidr: value['cidr'], ...(except === undefined ? {} : { _except: except }) };
}

function peer(value: unknown, index: number): V1NetworkPolicyPeer {
  const where = `AIEM_ENGINE_NETWORK_PEERS[${index}]`;
  if (!isObject(value) || Object.keys(value).length === 0)
    throw new Error(`${where} must be a non-empty object`);
  const result: V1NetworkPolicyPeer = {};
  for (const [key, field] of Object.entries(value)) {
    if (key === 'podSelector') result.podSelector = selector(field, `${where}.podSelector`);
    else if (key === 'namespaceSelector')
      result.namespaceSelector = selector(field, `${where}.namespaceSelector`);
    else if (key === 'ipBlock') result.ipBlock = ipBlock(field, `${where}.ipBlock`);
    else throw new Error(`${where} has an unknown field: ${key}`);
  }
  return result;
}

/** The peers of the setting's text; undefined when it is unset (no NetworkPolicies then). */
export function networkPeers(text: string | undefined): V1NetworkPolicyPeer[] | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error: unknown) {
    throw new Error(`AIEM_ENGINE_NETWORK_PEERS is not JSON: ${String(error)}`, { cause: error });
  }
  if (!Array.isArray(value))
    throw new Error('AIEM_ENGINE_NETWORK_PEERS must be a JSON array of NetworkPolicy peers');
  return value.map(peer);
}
