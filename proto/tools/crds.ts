import type { Api, Field, Message } from './descriptor.ts';
import { FIELD_SCHEMAS } from '../../shared/rules.ts';
import { ENGINE_INTENT, ENGINE_OPERATOR_STATUS, EXTRA_STATUS } from '../../shared/resources.ts';

export { CATEGORY, GROUP, ID_LABEL, VERSION, WORKSPACE_LABEL } from '../../shared/resources.ts';
import {
  CATEGORY,
  FROM_METADATA,
  GROUP,
  ID_LABEL,
  VERSION,
  WORKSPACE_LABEL,
} from '../../shared/resources.ts';

type Schema = Record<string, unknown>;

/** How one resource message becomes a custom resource kind. */
export interface KindSpec {
  /** The resource message, e.g. `ai.h2o.engine.v1.DAIEngine`. */
  message: string;
  kind: string;
  /** The Kubernetes plural when adding "s" to the lowercase kind is wrong (`processes`). */
  plural?: string;
  shortNames: string[];
  /** Extra `kubectl get` columns: header and JSON path (checked against the schema). */
  columns: [string, string][];
}

/** The fourteen kinds and what `kubectl get` shows of each. */
export const KINDS: readonly KindSpec[] = [
  engine('DAIEngine', ['daie'], '.spec.daiEngineVersion', true),
  engine('H2OEngine', ['h2oe'], '.spec.h2oEngineVersion', false),
  engine('NotebookEngine', ['nbe'], '.spec.notebookImage', true),
  profile('DAIEngineProfile', ['daip']),
  profile('H2OEngineProfile', ['h2op']),
  profile('NotebookEngineProfile', ['nbp']),
  version('DAIEngineVersion', ['daiv']),
  version('H2OEngineVersion', ['h2ov']),
  {
    message: 'ai.h2o.engine.v1.NotebookEngineImage',
    kind: 'NotebookEngineImage',
    shortNames: ['nbi'],
    columns: [
      ['Image', '.spec.image'],
      ['Enabled', '.spec.enabled'],
    ],
  },
  // Sandbox engines. The filesystem, metrics, H2O Drive, H2O Secure Store and the DAI license are
  // not stored: they are read from the engine (or the installation) when asked.
  {
    message: 'ai.h2o.engine.v1.SandboxEngine',
    kind: 'SandboxEngine',
    shortNames: ['sbe'],
    columns: [
      ['State', '.status.state'],
      ['Image', '.spec.sandboxEngineImage'],
      ['Template', '.spec.sandboxEngineTemplate'],
    ],
  },
  {
    message: 'ai.h2o.engine.v1.SandboxEngineImage',
    kind: 'SandboxEngineImage',
    shortNames: ['sbi'],
    columns: [
      ['Image', '.spec.image'],
      ['Enabled', '.spec.enabled'],
    ],
  },
  {
    message: 'ai.h2o.engine.v1.SandboxEngineTemplate',
    kind: 'SandboxEngineTemplate',
    shortNames: ['sbt'],
    columns: [
      ['Enabled', '.spec.enabled'],
      ['CPU Limit', '.spec.milliCpuLimit'],
      ['Memory Limit', '.spec.memoryBytesLimit'],
    ],
  },
  // A process and a port belong to one sandbox engine (owner reference); the state of a process
  // must survive a gateway restart and be seen by every replica and by the operator's idle rule,
  // and a port has a life cycle of its own (the Service and Ingress the operator makes for it).
  {
    message: 'ai.h2o.engine.v1.Process',
    kind: 'Process',
    plural: 'processes',
    shortNames: ['sbproc'],
    columns: [
      ['State', '.status.state'],
      ['Command', '.spec.command'],
      ['Exit Code', '.status.exitCode'],
    ],
  },
  {
    message: 'ai.h2o.engine.v1.Port',
    kind: 'Port',
    shortNames: ['sbport'],
    columns: [
      ['State', '.status.state'],
      ['Public', '.spec.public'],
      ['Internal URL', '.status.internalUrl'],
    ],
  },
];

function engine(kind: string, shortNames: string[], versionPath: string, storage: boolean): KindSpec {
  const columns: [string, string][] = [
    ['State', '.status.state'],
    ['Version', versionPath],
    ['Profile', '.spec.profile'],
    ['CPU', '.spec.cpu'],
    ['GPU', '.spec.gpu'],
    ['Memory', '.spec.memoryBytes'],
  ];
  if (storage) columns.push(['Storage', '.spec.storageBytes']);
  return { message: `ai.h2o.engine.v1.${kind}`, kind, shortNames, columns };
}

function profile(kind: string, shortNames: string[]): KindSpec {
  return {
    message: `ai.h2o.engine.v1.${kind}`,
    kind,
    shortNames,
    columns: [
      ['Display Name', '.spec.displayName'],
      ['Enabled', '.spec.enabled'],
      ['Priority', '.spec.priority'],
    ],
  };
}

function version(kind: string, shortNames: string[]): KindSpec {
  return {
    message: `ai.h2o.engine.v1.${kind}`,
    kind,
    shortNames,
    columns: [
      ['Image', '.spec.image'],
      ['Deprecated', '.spec.deprecated'],
      ['Aliases', '.spec.aliases'],
    ],
  };
}

const INT64 = new Set(['TYPE_INT64', 'TYPE_UINT64', 'TYPE_SINT64', 'TYPE_FIXED64', 'TYPE_SFIXED64']);
const INT32 = new Set(['TYPE_INT32', 'TYPE_UINT32', 'TYPE_SINT32', 'TYPE_FIXED32', 'TYPE_SFIXED32']);

/** The CustomResourceDefinition of one kind. */
/** The spec schema with the kind's intent fields (ENGINE_INTENT), which the API sets for the operator. */
function withIntent(schema: Schema, kind: string): Schema {
  const intent = ENGINE_INTENT[kind];
  if (intent === undefined) return schema;
  const properties = { ...(schema['properties'] as Record<string, Schema>) };
  for (const [field, description] of Object.entries(intent))
    properties[field] = { type: 'boolean', description };
  return { ...schema, properties };
}

/** Engines' status also carries the operator's bookkeeping (ENGINE_OPERATOR_STATUS). */
function withOperatorStatus(schema: Schema, kind: string): Schema {
  const extra = {
    ...(ENGINE_INTENT[kind] === undefined ? {} : ENGINE_OPERATOR_STATUS),
    ...EXTRA_STATUS[kind],
  };
  if (Object.keys(extra).length === 0) return schema;
  const properties = { ...(schema['properties'] as Record<string, Schema>), ...extra };
  return { ...schema, properties };
}

export function crdFor(api: Api, spec: KindSpec): Schema {
  const message = lookup(api, spec.message);
  const plural = spec.plural ?? `${spec.kind.toLowerCase()}s`;
  const top = message.fields.filter((f) => !FROM_METADATA.has(f.name));
  const specFields = top.filter((f) => !f.behaviors.includes('OUTPUT_ONLY'));
  const statusFields = top.filter((f) => f.behaviors.includes('OUTPUT_ONLY'));
  const schema = {
    type: 'object',
    description: unwrap(message.comment),
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object' },
      spec: withIntent(
        { ...objectSchema(api, specFields, true), description: 'What the owner of this resource sets.' },
        spec.kind,
      ),
      status: withOperatorStatus(
        {
          ...objectSchema(api, statusFields, false),
          description: 'What the service reports; written only through the status subresource.',
        },
        spec.kind,
      ),
    },
  };
  const columns = [
    ['Workspace', `.metadata.labels.${jsonPathKey(WORKSPACE_LABEL)}`],
    ['ID', `.metadata.labels.${jsonPathKey(ID_LABEL)}`],
    ...spec.columns.map(([header, path]) => [header, checkedPath(schema, path, spec.kind)] as const),
  ];
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      names: {
        kind: spec.kind,
        listKind: `${spec.kind}List`,
        plural,
        singular: spec.kind.toLowerCase(),
        shortNames: spec.shortNames,
        categories: [CATEGORY],
      },
      scope: 'Namespaced',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            ...columns.map(([name, jsonPath]) => ({ name, type: 'string', jsonPath })),
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: { openAPIV3Schema: schema },
        },
      ],
    },
  };
}

function lookup(api: Api, name: string): Message {
  const message = api.messages.get(name);
  if (message === undefined) throw new Error(`The API has no message ${name}`);
  return message;
}

function jsonPathKey(label: string): string {
  return label.replaceAll('.', '\\.').replaceAll('/', '\\/');
}

/** Fails generation when a printer column names a field the schema does not have. */
function checkedPath(schema: Schema, path: string, kind: string): string {
  let node: Schema | undefined = schema;
  for (const part of path.slice(1).split('.')) {
    node = (node?.['properties'] as Record<string, Schema> | undefined)?.[part];
  }
  if (node === undefined) throw new Error(`${kind}: printer column ${path} names no field`);
  return path;
}

function objectSchema(api: Api, fields: Field[], enforceImmutable: boolean): Schema {
  return {
    type: 'object',
    properties: Object.fromEntries(fields.map((f) => [f.jsonName, fieldSchema(api, f, enforceImmutable)])),
  };
}

function fieldSchema(api: Api, field: Field, enforceImmutable: boolean): Schema {
  const base =
    field.repeated && !isMap(api, field)
      ? { type: 'array', items: valueSchema(api, field) }
      : valueSchema(api, field);
  const schema: Schema = { ...base, ...FIELD_SCHEMAS[field.name], description: unwrap(field.comment) };
  if (enforceImmutable && field.behaviors.includes('IMMUTABLE')) {
    schema['x-kubernetes-validations'] = [
      { rule: 'self == oldSelf', message: `${field.jsonName} is immutable` },
    ];
  }
  return schema;
}

function isMap(api: Api, field: Field): boolean {
  return field.typeName !== undefined && api.messages.get(field.typeName)?.mapEntry === true;
}

const WELL_KNOWN: Record<string, Schema> = {
  'google.protobuf.Duration': { type: 'string', pattern: '^-?[0-9]+(\\.[0-9]{1,9})?s$' },
  'google.protobuf.Timestamp': { type: 'string', format: 'date-time' },
};

const SCALARS: Record<string, Schema> = {
  TYPE_BOOL: { type: 'boolean' },
  TYPE_DOUBLE: { type: 'number' },
  TYPE_FLOAT: { type: 'number' },
  TYPE_STRING: { type: 'string' },
  TYPE_BYTES: { type: 'string', format: 'byte' },
};

/** The schema of one value of the field (an element, for repeated fields). */
function valueSchema(api: Api, field: Field): Schema {
  if (INT64.has(field.type)) {
    // Stored as decimal strings, as the API's JSON has them, so no value loses precision;
    // kubectl users may still write plain numbers.
    return { 'x-kubernetes-int-or-string': true, pattern: '^-?[0-9]+$' };
  }
  if (INT32.has(field.type)) return { type: 'integer', format: 'int32' };
  const scalar = SCALARS[field.type];
  if (scalar) return scalar;
  if (field.type === 'TYPE_ENUM') return enumSchema(api, field.typeName ?? '');
  return messageSchema(api, field.typeName ?? '');
}

function enumSchema(api: Api, name: string): Schema {
  const found = api.enums.get(name);
  if (found === undefined) throw new Error(`The API has no enum ${name}`);
  return { type: 'string', enum: found.values.map((v) => v.name) };
}

function messageSchema(api: Api, name: string): Schema {
  const wellKnown = WELL_KNOWN[name];
  if (wellKnown) return wellKnown;
  const message = lookup(api, name);
  if (message.mapEntry) {
    const value = message.fields.find((f) => f.name === 'value');
    if (value === undefined) throw new Error(`Map entry ${name} has no value`);
    return { type: 'object', additionalProperties: valueSchema(api, value) };
  }
  return objectSchema(api, message.fields, false);
}

/** Joins the hard-wrapped lines of a proto comment; blank lines still separate paragraphs. */
export function unwrap(comment: string): string {
  return comment.replace(/([^\n])\n(?=[^\n])/g, '$1 ');
}
