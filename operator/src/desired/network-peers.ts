/**
 * The peers admitted to engines' ports (AIEM_ENGINE_NETWORK_PEERS), and to the pods of engines
 * whose ports users publish (AIEM_SANDBOX_PORTS_PEERS): JSON arrays of Kubernetes
 * NetworkPolicyPeer objects, as the chart renders them, read into client-node's model (which names
 * `ipBlock.except` `_except`). Everything the apiserver would refuse is refused here, so a
 * malformed setting stops the operator at start with the reason, rather than failing every
 * engine's reconcile later.
 */
import type { V1IPBlock, V1LabelSelector, V1NetworkPolicyPeer } from '@kubernetes/client-node';

const OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'];
const CIDR = /^[0-9a-fA-F.:]+\/\d{1,3}$/;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isStrings = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((v) => typeof v === 'string');

function matchLabels(value: unknown, where: string): Record<string, string> {
  if (!isObject(value) || !Object.values(value).every((v) => typeof v === 'string'))
    throw new Error(`${where}.matchLabels must map label names to strings`);
  return value as Record<string, string>;
}

function matchExpressions(value: unknown, where: string): NonNullable<V1LabelSelector['matchExpressions']> {
  if (!Array.isArray(value)) throw new Error(`${where}.matchExpressions must be a list`);
  return value.map((expression: unknown, i) => {
    const at = `${where}.matchExpressions[${i}]`;
    if (
      !isObject(expression) ||
      typeof expression['key'] !== 'string' ||
      !OPERATORS.includes(String(expression['operator']))
    )
      throw new Error(`${at} needs a key and an operator (${OPERATORS.join(', ')})`);
    const values = expression['values'];
    if (values !== undefined && !isStrings(values)) throw new Error(`${at}.values must be a list of strings`);
    return {
      key: expression['key'],
      operator: String(expression['operator']),
      ...(values ? { values } : {}),
    };
  });
}

function selector(value: unknown, where: string): V1LabelSelector {
  if (!isObject(value)) throw new Error(`${where} must be a label selector object`);
  const unknown = Object.keys(value).filter((key) => key !== 'matchLabels' && key !== 'matchExpressions');
  if (unknown.length > 0) throw new Error(`${where} has unknown fields: ${unknown.join(', ')}`);
  const labels = value['matchLabels'];
  const expressions = value['matchExpressions'];
  return {
    ...(labels === undefined ? {} : { matchLabels: matchLabels(labels, where) }),
    ...(expressions === undefined ? {} : { matchExpressions: matchExpressions(expressions, where) }),
  };
}

function ipBlock(value: unknown, where: string): V1IPBlock {
  if (!isObject(value) || typeof value['cidr'] !== 'string' || !CIDR.test(value['cidr']))
    throw new Error(`${where} must have a cidr such as 10.0.0.0/8`);
  const except = value['except'];
  if (except !== undefined && !(isStrings(except) && except.every((e) => CIDR.test(e))))
    throw new Error(`${where}.except must be a list of CIDRs`);
  return { cidr: value['cidr'], ...(except === undefined ? {} : { _except: except }) };
}

function peer(value: unknown, where: string): V1NetworkPolicyPeer {
  if (!isObject(value) || Object.keys(value).length === 0)
    throw new Error(`${where} must be a non-empty object`);
  // Kubernetes refuses an ipBlock beside a selector.
  if ('ipBlock' in value && Object.keys(value).length > 1)
    throw new Error(`${where}: an ipBlock stands alone`);
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

/**
 * The peers of a setting's text; undefined when it is unset (for AIEM_ENGINE_NETWORK_PEERS: no
 * NetworkPolicies then). `setting` names the variable in the messages.
 */
export function networkPeers(
  text: string | undefined,
  setting = 'AIEM_ENGINE_NETWORK_PEERS',
): V1NetworkPolicyPeer[] | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error: unknown) {
    throw new Error(`${setting} is not JSON: ${String(error)}`, { cause: error });
  }
  if (!Array.isArray(value)) throw new Error(`${setting} must be a JSON array of NetworkPolicy peers`);
  return value.map((item: unknown, index) => peer(item, `${setting}[${index}]`));
}
