/**
 * YAML read the way Kubernetes reads it. kubectl and the Go tools profile administrators copy
 * pod specs from resolve plain scalars by YAML 1.1 rules (go-yaml v2 behind sigs.k8s.io/yaml),
 * while js-yaml follows YAML 1.2. The difference bites in pod specs: `defaultMode: 0644` is
 * the octal 420 to Kubernetes but 644 to YAML 1.2, which the apiserver refuses as a file mode;
 * `yes`, `on` and `y` are booleans; `1_000` is a number; dates stay strings.
 */
import yaml from 'js-yaml';

const TRUE = new Set(['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON']);
const FALSE = new Set(['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF']);
const NULL = new Set(['', '~', 'null', 'Null', 'NULL']);
// Go's strconv.ParseInt with base 0, after go-yaml has removed the underscores.
const INTEGER = /^[-+]?(?:0[bB][01]+|0[oO][0-7]+|0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)$/;
// go-yaml's yamlStyleFloat; a scalar starting with "." is a float only in this form.
const FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/;
const FLOAT_FROM_DOT = /^\.[0-9]+(?:[eE][-+]?[0-9]+)?$/;

const nullType = new yaml.Type('tag:yaml.org,2002:null', {
  kind: 'scalar',
  resolve: (data: string | null) => data === null || NULL.has(data),
  construct: () => null,
});

const boolType = new yaml.Type('tag:yaml.org,2002:bool', {
  kind: 'scalar',
  resolve: (data: string | null) => data !== null && (TRUE.has(data) || FALSE.has(data)),
  construct: (data: string) => TRUE.has(data),
});

const intType = new yaml.Type('tag:yaml.org,2002:int', {
  kind: 'scalar',
  resolve: (data: string | null) =>
    data !== null && /^[-+0-9]/.test(data) && INTEGER.test(withoutUnderscores(data)),
  construct: (data: string) => parseInteger(withoutUnderscores(data)),
});

// go-yaml tries numbers only for scalars that start with a digit, a sign or a dot, and keeps
// floats out of range as strings.
const floatType = new yaml.Type('tag:yaml.org,2002:float', {
  kind: 'scalar',
  resolve: (data: string | null) =>
    data !== null && isFloat(data) && Number.isFinite(Number(withoutUnderscores(data))),
  construct: (data: string) => Number(withoutUnderscores(data)),
});

function isFloat(data: string): boolean {
  if (data.startsWith('.')) return FLOAT_FROM_DOT.test(data);
  return /^[-+0-9]/.test(data) && FLOAT.test(withoutUnderscores(data));
}

// `<<: *anchor` merges mappings in go-yaml too.
const mergeType = new yaml.Type('tag:yaml.org,2002:merge', {
  kind: 'scalar',
  resolve: (data: string | null) => data === '<<',
});

const KUBERNETES_SCHEMA = yaml.FAILSAFE_SCHEMA.extend({
  implicit: [nullType, boolType, intType, floatType, mergeType],
});

/**
 * Parses one YAML document as Kubernetes does. Warning: `.inf` and `.nan` stay strings, where
 * kubectl fails to turn them into JSON.
 * @throws yaml.YAMLException for invalid YAML, several documents or duplicate keys
 */
export function loadKubernetesYaml(text: string): unknown {
  return yaml.load(text, { schema: KUBERNETES_SCHEMA });
}

function withoutUnderscores(text: string): string {
  return text.replaceAll('_', '');
}

function parseInteger(text: string): number {
  const negative = text.startsWith('-');
  const unsigned = text.replace(/^[-+]/, '');
  const prefix = unsigned.slice(0, 2).toLowerCase();
  const radix =
    prefix === '0b' ? 2 : prefix === '0o' ? 8 : prefix === '0x' ? 16 : unsigned.startsWith('0') ? 8 : 10;
  const digits = radix === 10 || (radix === 8 && !prefix.startsWith('0o')) ? unsigned : unsigned.slice(2);
  const value = Number.parseInt(digits === '' ? '0' : digits, radix);
  return negative ? -value : value;
}
