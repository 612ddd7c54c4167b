/**
 * Strategic merge patch metadata of pod templates: which lists merge, by which key, and what
 * type sits under each field. The table itself is generated from Kubernetes' OpenAPI document
 * (gen/patch-metadata.ts); this module answers the two questions the merge asks, with the same
 * outcomes as kubectl's reflection over the k8s.io/api structs: the metadata of a field of an
 * object, and the metadata of a list field and its element type.
 */
import { StrategicMergeError } from './errors.ts';
import { PATCH_METADATA } from './gen/patch-metadata.ts';

/** One field of a Kubernetes type, as the generated table records it. */
export interface FieldMetadata {
  /** A type name of the table, `[]T`, `map[string]T`, or a scalar such as `string`. */
  readonly type: string;
  /** x-kubernetes-patch-strategy: `merge`, `replace`, either with `,retainKeys`, or absent. */
  readonly patchStrategy?: string;
  /** x-kubernetes-patch-merge-key: the field that identifies an element of a merged list. */
  readonly patchMergeKey?: string;
}

/** A Kubernetes type that a strategic merge patch can be applied to: PodTemplateSpec or below. */
export type TypeName = keyof typeof PATCH_METADATA;

/** A type as the merge sees it. */
export type SchemaType =
  | {
      readonly kind: 'struct';
      readonly name: string;
      readonly fields: Readonly<Record<string, FieldMetadata>>;
    }
  | { readonly kind: 'list'; readonly items: string }
  | { readonly kind: 'map'; readonly values: string }
  | { readonly kind: 'scalar'; readonly name: string };

/** How a field's value is patched. */
export interface FieldPatch {
  readonly type: SchemaType;
  /** The strategy without retainKeys, which only matters when a patch is computed: "" replaces. */
  readonly strategy: '' | 'merge' | 'replace';
  /** "" when the field declares none. */
  readonly mergeKey: string;
}

const TABLE: Readonly<Record<string, Readonly<Record<string, FieldMetadata>>>> = PATCH_METADATA;

/** The schema of a type expression of the table. */
export function schemaType(expression: string): SchemaType {
  if (expression.startsWith('[]')) return { kind: 'list', items: expression.slice(2) };
  if (expression.startsWith('map[string]'))
    return { kind: 'map', values: expression.slice('map[string]'.length) };
  const fields = Object.hasOwn(TABLE, expression) ? TABLE[expression] : undefined;
  return fields === undefined
    ? { kind: 'scalar', name: expression }
    : { kind: 'struct', name: expression, fields };
}

/**
 * The metadata of `key` in an object of type `parent`. Like encoding/json, which kubectl's
 * lookup follows, an exact name wins and a name differing only in case is accepted.
 * @throws StrategicMergeError when `parent` is not an object type or has no such field
 */
export function lookupField(parent: SchemaType, key: string, path: string): FieldPatch {
  if (parent.kind !== 'struct') {
    throw new StrategicMergeError(path, `cannot merge an object into a field of type ${describe(parent)}`);
  }
  const folded = key.toLowerCase();
  const name = Object.hasOwn(parent.fields, key)
    ? key
    : Object.keys(parent.fields).find((candidate) => candidate.toLowerCase() === folded);
  const field = name === undefined ? undefined : parent.fields[name];
  if (field === undefined) throw new StrategicMergeError(path, `${parent.name} has no field "${key}"`);
  return {
    type: schemaType(field.type),
    strategy: strategyOf(field, path),
    mergeKey: field.patchMergeKey ?? '',
  };
}

/**
 * The metadata of the list field `key` of `parent`, with the type of its elements.
 * @throws StrategicMergeError when the field is unknown or is not a list
 */
export function lookupListField(parent: SchemaType, key: string, path: string): FieldPatch {
  const field = lookupField(parent, key, path);
  if (field.type.kind !== 'list') {
    throw new StrategicMergeError(path, `cannot merge a list into a field of type ${describe(field.type)}`);
  }
  const items = schemaType(field.type.items);
  if (items.kind === 'list') throw new StrategicMergeError(path, 'cannot merge lists of lists');
  return { ...field, type: items };
}

function strategyOf(field: FieldMetadata, path: string): FieldPatch['strategy'] {
  const strategies = (field.patchStrategy ?? '').split(',').filter((s) => s !== 'retainKeys');
  const [strategy = '', ...rest] = strategies;
  if (rest.length > 0 || (strategy !== '' && strategy !== 'merge' && strategy !== 'replace')) {
    throw new StrategicMergeError(path, `unexpected patch strategy "${field.patchStrategy ?? ''}"`);
  }
  return strategy;
}

function describe(type: SchemaType): string {
  switch (type.kind) {
    case 'struct':
      return type.name;
    case 'list':
      return `[]${type.items}`;
    case 'map':
      return `map[string]${type.values}`;
    case 'scalar':
      return type.name;
  }
}
