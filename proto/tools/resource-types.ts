/**
 * TypeScript types of the custom resources as they are stored (operator/src/gen/resources.ts):
 * per kind, its `spec` and `status` (kubebuilder's `XxxSpec` / `XxxStatus`), with the JSON
 * names and JSON types the stored object has. The gateway writes a message's canonical JSON
 * (gateway/src/store/objects.ts): OUTPUT_ONLY fields in status, the others in spec, name, uid and
 * times in the object's metadata; int64 as decimal strings, bytes as base64, enums by name,
 * Timestamps and Durations as text. The CRD schemas (crds.ts) admit what kubectl users write
 * beside that — an int64 as a plain number, any field left out — so every field is optional and
 * an int64 is `string | number`. Engines' spec and status also hold the fields the API and the
 * operator keep beside the message's (shared/resources.ts), typed from their schemas.
 */
import { FROM_METADATA } from '../../shared/resources.ts';
import { ENGINE_INTENT, ENGINE_OPERATOR_STATUS, EXTRA_STATUS } from '../../shared/resources.ts';
import { KINDS, unwrap, type KindSpec } from './crds.ts';
import type { Api, Field, Message } from './descriptor.ts';

/** Where `make generate` writes the types, from the repository's root. */
export const RESOURCE_TYPES_PATH = 'operator/src/gen/resources.ts';

/** One property of a generated type: its JSON name, TypeScript type and first comment paragraph. */
export interface Property {
  name: string;
  type: string;
  comment: string;
}

/** The stored spec and status of one kind, and the named types they refer to. */
export interface ResourceModel {
  kind: string;
  spec: Property[];
  status: Property[];
}

/** A named type the properties refer to: an interface of a message, or a union of enum names. */
export interface NamedType {
  name: string;
  comment: string;
  /** An interface's properties, or the literals of an enum's union. */
  body: { properties: Property[] } | { literals: string[] };
}

const API_PACKAGE_PREFIX = 'ai.h2o.engine.v1.';

const INT64 = new Set(['TYPE_INT64', 'TYPE_UINT64', 'TYPE_SINT64', 'TYPE_FIXED64', 'TYPE_SFIXED64']);
const NUMBER = new Set([
  'TYPE_INT32',
  'TYPE_UINT32',
  'TYPE_SINT32',
  'TYPE_FIXED32',
  'TYPE_SFIXED32',
  'TYPE_DOUBLE',
  'TYPE_FLOAT',
]);
const SCALARS: Record<string, string> = {
  TYPE_BOOL: 'boolean',
  TYPE_STRING: 'string',
  // base64, as proto3 JSON writes bytes.
  TYPE_BYTES: 'string',
};
/** Well-known types the API stores as text: RFC 3339 times and `"3600s"` durations. */
const WELL_KNOWN: Record<string, string> = {
  'google.protobuf.Timestamp': 'string',
  'google.protobuf.Duration': 'string',
};
/** How the generated file spells an int64: the API's decimal string, or kubectl's plain number. */
export const INT64_TYPE = 'Int64';

/** Collects the named types of messages and enums that the kinds' fields refer to. */
class Names {
  readonly types = new Map<string, NamedType>();
  private readonly byName = new Map<string, string>();
  readonly api: Api;
  constructor(api: Api) {
    this.api = api;
  }

  /** The generated name of a message or enum: its full name without the package, dots dropped. */
  name(fullName: string): string {
    if (!fullName.startsWith(API_PACKAGE_PREFIX)) throw new Error(`${fullName} is not an API type`);
    const name = fullName.slice(API_PACKAGE_PREFIX.length).replaceAll('.', '');
    const known = this.byName.get(name);
    if (known !== undefined && known !== fullName)
      throw new Error(`${fullName} and ${known} are both ${name}`);
    this.byName.set(name, fullName);
    return name;
  }

  enumType(fullName: string): string {
    const name = this.name(fullName);
    if (this.types.has(name)) return name;
    const found = this.api.enums.get(fullName);
    if (found === undefined) throw new Error(`The API has no enum ${fullName}`);
    this.types.set(name, {
      name,
      comment: firstParagraph(found.comment),
      body: { literals: found.values.map((v) => v.name) },
    });
    return name;
  }

  messageType(message: Message): string {
    const name = this.name(message.fullName);
    if (this.types.has(name)) return name;
    // Set before the fields are read, so that a message that holds itself ends.
    const body = { properties: [] as Property[] };
    this.types.set(name, { name, comment: firstParagraph(message.comment), body });
    body.properties.push(...message.fields.map((f) => property(this, f)));
    return name;
  }
}

function lookup(api: Api, name: string): Message {
  const message = api.messages.get(name);
  if (message === undefined) throw new Error(`The API has no message ${name}`);
  return message;
}

function property(names: Names, field: Field): Property {
  return { name: field.jsonName, type: fieldType(names, field), comment: firstParagraph(field.comment) };
}

function fieldType(names: Names, field: Field): string {
  const entry = field.typeName === undefined ? undefined : names.api.messages.get(field.typeName);
  if (entry?.mapEntry === true) {
    const value = entry.fields.find((f) => f.name === 'value');
    if (value === undefined) throw new Error(`Map entry ${entry.fullName} has no value`);
    return `{ [key: string]: ${valueType(names, value)} }`;
  }
  const value = valueType(names, field);
  return field.repeated ? `${parenthesised(value)}[]` : value;
}

/** The type of one value of the field (an element, for repeated fields). */
function valueType(names: Names, field: Field): string {
  if (INT64.has(field.type)) return INT64_TYPE;
  if (NUMBER.has(field.type)) return 'number';
  const scalar = SCALARS[field.type];
  if (scalar !== undefined) return scalar;
  const typeName = field.typeName ?? '';
  if (field.type === 'TYPE_ENUM') return names.enumType(typeName);
  return WELL_KNOWN[typeName] ?? names.messageType(lookup(names.api, typeName));
}

function parenthesised(type: string): string {
  return type.includes(' | ') ? `(${type})` : type;
}

type Schema = Readonly<Record<string, unknown>>;

const SCHEMA_SCALARS: Record<string, string> = {
  string: 'string',
  boolean: 'boolean',
  integer: 'number',
  number: 'number',
};

/** The TypeScript type of a JSON schema, as the fields kept beside the API's are declared. */
export function schemaType(schema: Schema): string {
  const values = schema['enum'];
  if (Array.isArray(values)) return values.map((v) => JSON.stringify(v)).join(' | ');
  const scalar = SCHEMA_SCALARS[String(schema['type'])];
  if (scalar !== undefined) return scalar;
  if (schema['type'] === 'array') return `${parenthesised(schemaType((schema['items'] ?? {}) as Schema))}[]`;
  if (schema['type'] === 'object') {
    const properties = Object.entries((schema['properties'] ?? {}) as Record<string, Schema>);
    const required = new Set((schema['required'] ?? []) as string[]);
    const members = properties.map(
      ([name, value]) => `${name}${required.has(name) ? '' : '?'}: ${schemaType(value)}`,
    );
    return `{ ${members.join('; ')} }`;
  }
  throw new Error(`No TypeScript type for the schema ${JSON.stringify(schema)}`);
}

function schemaProperties(fields: Readonly<Record<string, unknown>>): Property[] {
  return Object.entries(fields).map(([name, schema]) => ({
    name,
    type: schemaType(schema as Schema),
    comment: firstParagraph(descriptionOf(schema as Schema)),
  }));
}

function descriptionOf(schema: Schema): string {
  const description = schema['description'];
  return typeof description === 'string' ? description : '';
}

/** The intent fields (shared/resources.ts: ENGINE_INTENT), booleans described by their text. */
function intentProperties(intent: Readonly<Record<string, string>>): Property[] {
  return Object.entries(intent).map(([name, comment]) => ({ name, type: 'boolean', comment }));
}

/** The stored spec and status of each kind, and every named type they refer to. */
export function resourceModels(api: Api): { kinds: ResourceModel[]; types: NamedType[] } {
  const names = new Names(api);
  const kinds = KINDS.map((spec) => kindModel(api, names, spec));
  return { kinds, types: [...names.types.values()] };
}

function kindModel(api: Api, names: Names, spec: KindSpec): ResourceModel {
  const message = lookup(api, spec.message);
  const stored = message.fields.filter((f) => !FROM_METADATA.has(f.name));
  const output = (f: Field): boolean => f.behaviors.includes('OUTPUT_ONLY');
  const intent = ENGINE_INTENT[spec.kind];
  // The intent fields are the API's; engines' status also carries the operator's bookkeeping.
  const extraStatus = { ...(intent === undefined ? {} : ENGINE_OPERATOR_STATUS), ...EXTRA_STATUS[spec.kind] };
  return {
    kind: spec.kind,
    spec: [
      ...stored.filter((f) => !output(f)).map((f) => property(names, f)),
      ...intentProperties(intent ?? {}),
    ],
    status: [...stored.filter(output).map((f) => property(names, f)), ...schemaProperties(extraStatus)],
  };
}

function firstParagraph(comment: string): string {
  return unwrap(comment).split('\n\n')[0]?.trim() ?? '';
}

/** A JSDoc comment, indented, or nothing when there is no text. */
function doc(text: string, indent: string): string[] {
  if (text === '') return [];
  return [`${indent}/** ${text.replaceAll('*/', '*\\/')} */`];
}

function members(properties: readonly Property[]): string[] {
  return properties.flatMap((p) => [...doc(p.comment, '  '), `  ${p.name}?: ${p.type};`]);
}

/** The TypeScript source of operator/src/gen/resources.ts. */
export function resourceTypesSource(api: Api): string {
  const { kinds, types } = resourceModels(api);
  const kindTypes = kinds.flatMap((k) => [
    `/** What the owner of a ${k.kind} sets. */`,
    `export type ${k.kind}Spec = {`,
    ...members(k.spec),
    '};',
    '',
    `/** What the service reports of a ${k.kind}. */`,
    `export type ${k.kind}Status = {`,
    ...members(k.status),
    '};',
    '',
  ]);
  const namedTypes = [...types]
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((t) => [
      ...doc(t.comment, ''),
      ...('literals' in t.body
        ? [`export type ${t.name} = ${t.body.literals.map((l) => JSON.stringify(l)).join(' | ')};`]
        : [`export type ${t.name} = {`, ...members(t.body.properties), '};']),
      '',
    ]);
  return [
    '// Code generated by proto/tools/generate.ts from proto/. DO NOT EDIT.',
    '//',
    '// The spec and status of each custom resource kind as stored: JSON names and JSON types;',
    '// every field may be absent (the CRDs require none).',
    '',
    '/** An int64: a decimal string as the API writes it, or a plain number as kubectl may. */',
    `export type ${INT64_TYPE} = string | number;`,
    '',
    ...kindTypes,
    ...namedTypes,
    '/** The stored spec and status of each kind. */',
    'export type ResourceTypes = {',
    ...kinds.map((k) => `  ${k.kind}: { spec: ${k.kind}Spec; status: ${k.kind}Status };`),
    '};',
    '',
  ].join('\n');
}
