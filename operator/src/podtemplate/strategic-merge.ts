/**
 * Kubernetes strategic merge patch, as `kubectl patch --type=strategic` applies it, for pod
 * templates and every type under them. The patch metadata (which lists merge, by which key)
 * comes from the table generated from Kubernetes' OpenAPI document (patch-schema.ts).
 *
 * The rules, in short: objects merge field by field and a null deletes a field; lists whose field
 * has the strategy "merge" merge element by element (objects by their merge key, scalars as a
 * set), every other list is replaced; new elements are placed as list-order.ts explains. Inside
 * a patch, `$patch: replace` replaces an object or a whole list, `$patch: delete` empties an
 * object or removes a list element, `$retainKeys` clears the fields it does not list,
 * `$setElementOrder/<list>` orders a list and `$deleteFromPrimitiveList/<list>` removes scalars.
 * Parts of the patch that land where the original has nothing are taken as they are, minus
 * nulls and anything marked with `$patch`; elements appended to a merged list and replaced
 * lists are taken verbatim. kubectl does all of this, quirks included, and the differential test
 * holds the two together.
 *
 * Where kubectl is not deterministic the merge picks one of its outcomes: Go visits a map's keys
 * in random order, so a patch that both adds to and deletes from the same scalar list
 * ($deleteFromPrimitiveList) has two possible results; here deletions always go first.
 */
import { childPath, elementPath, StrategicMergeError } from './errors.ts';
import {
  copyJson,
  fieldOf,
  isObject,
  kindOf,
  removeField,
  sameValue,
  setField,
  type JsonKind,
  type JsonObject,
  type JsonValue,
} from './json.ts';
import { orderMergedList, requireMergeKey } from './list-order.ts';
import { lookupField, lookupListField, schemaType, type SchemaType, type TypeName } from './patch-schema.ts';

export { StrategicMergeError } from './errors.ts';
export type { JsonObject, JsonValue } from './json.ts';
export type { TypeName } from './patch-schema.ts';

const PATCH = '$patch';
const RETAIN_KEYS = '$retainKeys';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList';
const SET_ELEMENT_ORDER = '$setElementOrder';

/** Where the merge is: the type of the object at hand and its path, for errors. */
interface Place {
  type: SchemaType;
  path: string;
}

/** How a list field merges. */
interface ListMerge {
  items: SchemaType;
  mergeKey: string;
  /** A $deleteFromPrimitiveList: remove the patch's scalars instead of adding them. */
  deleting: boolean;
  path: string;
}

/**
 * Applies a strategic merge patch to `original`, an object of type `schema` (for example
 * 'PodTemplateSpec'). Neither argument is changed.
 * @throws StrategicMergeError when the patch is invalid for the document: a directive kubectl
 *   refuses, a merged list element without its merge key, lists or objects where the type has
 *   none, elements of different types in a merged list
 */
export function strategicMerge(original: JsonObject, patch: JsonObject, schema: TypeName): JsonObject {
  return mergeObject(copyJson(original), copyJson(patch), { type: schemaType(schema), path: '' });
}

function mergeObject(original: JsonObject, patch: JsonObject, at: Place): JsonObject {
  if (Object.hasOwn(patch, PATCH)) return objectDirective(patch, at.path);
  applyRetainKeys(original, patch, at.path);
  applyElementOrders(original, patch, at);
  // Deletions from scalar lists first: kubectl takes the keys in random order (see above).
  const keys = Object.keys(patch);
  const ordered = [
    ...keys.filter((key) => key.startsWith(DELETE_FROM_PRIMITIVE_LIST)),
    ...keys.filter((key) => !key.startsWith(DELETE_FROM_PRIMITIVE_LIST)),
  ];
  for (const key of ordered) mergeField(original, key, patch[key] as JsonValue, at);
  return original;
}

/** `$patch: replace` keeps the patch (without the marker), `$patch: delete` leaves {}. */
function objectDirective(patch: JsonObject, path: string): JsonObject {
  const directive = patch[PATCH] ?? null;
  if (directive === 'replace') {
    removeField(patch, PATCH);
    return patch;
  }
  if (directive === 'delete') return {};
  throw new StrategicMergeError(
    path,
    `unsupported directive "$patch: ${show(directive)}" in an object (only "replace" and "delete" are)`,
  );
}

/** `$retainKeys`: the patch may set only the listed fields, and the others are cleared. */
function applyRetainKeys(original: JsonObject, patch: JsonObject, path: string): void {
  if (!Object.hasOwn(patch, RETAIN_KEYS)) return;
  const retained = patch[RETAIN_KEYS];
  removeField(patch, RETAIN_KEYS);
  if (!Array.isArray(retained))
    throw new StrategicMergeError(path, '$retainKeys must be a list of field names');
  const isRetained = (key: string): boolean => retained.some((name) => sameValue(name, key, path));
  for (const [key, value] of Object.entries(patch)) {
    const directive = key.startsWith(DELETE_FROM_PRIMITIVE_LIST) || key.startsWith(SET_ELEMENT_ORDER);
    if (value !== null && !directive && !isRetained(key)) {
      throw new StrategicMergeError(path, `the patch sets "${key}", which $retainKeys does not list`);
    }
  }
  for (const key of Object.keys(original)) {
    if (!isRetained(key)) removeField(original, key);
  }
}

function mergeField(original: JsonObject, patchKey: string, value: JsonValue, at: Place): void {
  const target = directiveTarget(patchKey, DELETE_FROM_PRIMITIVE_LIST, at.path);
  const key = target ?? patchKey;
  const deleting = target !== undefined;
  if (value === null) {
    removeField(original, key);
    return;
  }
  const current = fieldOf(original, key);
  if (current === undefined || kindOf(current) !== kindOf(value)) {
    // New to the original, or of another type: the patch's value, unless it only deletes.
    if (!deleting) putPatchValue(original, key, value);
    return;
  }
  const path = childPath(at.path, key);
  if (isObject(current) && isObject(value)) {
    setField(original, key, mergeChildObject(current, value, { key, at, path }));
  } else if (Array.isArray(current) && Array.isArray(value)) {
    setField(original, key, mergeChildList(current, value, { key, at, path, deleting }));
  } else {
    setField(original, key, value);
  }
}

/** The field a `$deleteFromPrimitiveList/<field>` or `$setElementOrder/<field>` key names. */
function directiveTarget(key: string, prefix: string, path: string): string | undefined {
  if (!key.startsWith(prefix)) return undefined;
  const slash = key.indexOf('/');
  if (slash < 0 || key.slice(0, slash) !== prefix) {
    throw new StrategicMergeError(path, `malformed directive "${key}" (expected "${prefix}/<field>")`);
  }
  return key.slice(slash + 1);
}

/** Takes a patch value as it is, without nulls and without anything marked with `$patch`. */
function putPatchValue(original: JsonObject, key: string, value: JsonValue): void {
  discardNulls(value);
  const kept = withoutDirectives(value);
  if (kept === undefined) removeField(original, key);
  else setField(original, key, kept);
}

function discardNulls(value: JsonValue): void {
  if (Array.isArray(value)) {
    value.forEach(discardNulls);
  } else if (isObject(value)) {
    for (const [key, child] of Object.entries(value)) {
      if (child === null) removeField(value, key);
      else discardNulls(child);
    }
  }
}

/** Drops every object that carries `$patch` (undefined when `value` is one). */
function withoutDirectives(value: JsonValue): JsonValue | undefined {
  if (Array.isArray(value)) {
    return value.map(withoutDirectives).filter((element): element is JsonValue => element !== undefined);
  }
  if (!isObject(value)) return value;
  if (Object.hasOwn(value, PATCH)) return undefined;
  for (const [key, child] of Object.entries(value)) {
    const kept = withoutDirectives(child);
    if (kept === undefined) removeField(value, key);
    else setField(value, key, kept);
  }
  return value;
}

interface Child {
  key: string;
  at: Place;
  path: string;
}

function mergeChildObject(current: JsonObject, patch: JsonObject, child: Child): JsonObject {
  const field = lookupField(child.at.type, child.key, child.path);
  if (field.strategy === 'replace') return patch;
  return mergeObject(current, patch, { type: field.type, path: child.path });
}

function mergeChildList(
  current: JsonValue[],
  patch: JsonValue[],
  child: Child & { deleting: boolean },
): JsonValue[] {
  const field = lookupListField(child.at.type, child.key, child.path);
  // A deletion list removes scalars whatever the field's strategy.
  if (field.strategy !== 'merge' && !child.deleting) return patch;
  const list = { items: field.type, mergeKey: field.mergeKey, deleting: child.deleting, path: child.path };
  return mergeList(current, patch, list).merged;
}

interface MergedList {
  merged: JsonValue[];
  /** The original list's slots after the merge edited them in place, as kubectl leaves them. */
  editedOriginal: JsonValue[];
}

function mergeList(original: JsonValue[], patch: JsonValue[], list: ListMerge): MergedList {
  if (original.length === 0 && patch.length === 0) return { merged: original, editedOriginal: original };
  const kind = elementKind([original, patch], list.path);
  if (kind !== 'object') return { merged: mergeScalars(original, patch, list), editedOriginal: original };
  if (list.mergeKey === '') {
    throw new StrategicMergeError(list.path, 'cannot merge a list of objects that has no merge key');
  }
  return mergeObjects(original, patch, list);
}

/** The one kind of all elements. @throws StrategicMergeError for mixed kinds, nulls, lists of lists */
function elementKind(lists: readonly JsonValue[][], path: string): JsonKind {
  let kind: JsonKind | undefined;
  for (const element of lists.flat()) {
    const elementKind = kindOf(element);
    if (elementKind === 'null' || elementKind === 'list') {
      throw new StrategicMergeError(
        path,
        `cannot merge a list that holds ${elementKind === 'null' ? 'null' : 'lists'}`,
      );
    }
    if (kind !== undefined && kind !== elementKind) {
      throw new StrategicMergeError(path, `cannot merge a list whose elements are of different types`);
    }
    kind = elementKind;
  }
  if (kind === undefined) throw new StrategicMergeError(path, 'cannot order a list that has no elements');
  return kind;
}

/** Scalar lists merge as sets; a deletion list removes its values. */
function mergeScalars(original: JsonValue[], patch: JsonValue[], list: ListMerge): JsonValue[] {
  const contains = (values: JsonValue[], value: JsonValue): boolean =>
    values.some((other) => sameValue(other, value, list.path));
  if (list.deleting) return original.filter((value) => !contains(patch, value));
  const merged: JsonValue[] = [];
  for (const value of [...original, ...patch]) {
    if (!contains(merged, value)) merged.push(value);
  }
  const identity = { mergeKey: '', objects: false, path: list.path };
  return orderMergedList(merged, { patchOrder: patch, serverOrder: original }, identity);
}

function mergeObjects(original: JsonValue[], patch: JsonValue[], list: ListMerge): MergedList {
  const edited = new EditedList(original);
  const { additions, replacement } = applyElementDirectives(edited, patch as JsonObject[], list);
  const base = replacement ?? edited.items();
  const merged = replacement ? [...replacement] : edited;
  for (const element of additions) mergeElement(merged, element, list);
  const items = Array.isArray(merged) ? merged : merged.items();
  const identity = { mergeKey: list.mergeKey, objects: true, path: list.path };
  const ordered = orderMergedList(items, { patchOrder: additions, serverOrder: base }, identity);
  return { merged: ordered, editedOriginal: edited.slots };
}

/**
 * Handles the elements that carry `$patch`: deletes (by merge key, every match) and replace.
 * Returns the other elements, and the replacement list when the patch replaces the list.
 */
function applyElementDirectives(
  edited: EditedList,
  patch: JsonObject[],
  list: ListMerge,
): { additions: JsonObject[]; replacement?: JsonObject[] } {
  const additions = patch.filter((element) => !Object.hasOwn(element, PATCH));
  let replace = false;
  for (const [index, element] of patch.entries()) {
    const directive = fieldOf(element, PATCH);
    const path = elementPath(list.path, { index });
    // kubectl refuses an element without its key whether the list merges or is replaced.
    if (directive === undefined) requireMergeKey(element, list.mergeKey, path);
    else if (directive === 'delete')
      edited.deleteMatching(list.mergeKey, requireMergeKey(element, list.mergeKey, path), path);
    else if (directive === 'replace') replace = true;
    else if (directive === 'merge')
      throw new StrategicMergeError(path, 'a list cannot be marked "$patch: merge"');
    else throw new StrategicMergeError(path, `unsupported directive "$patch: ${show(directive)}" in a list`);
  }
  return replace ? { additions: [], replacement: additions } : { additions };
}

/** Merges a patch element into the element with its merge key, or appends it as it is. */
function mergeElement(merged: JsonValue[] | EditedList, element: JsonObject, list: ListMerge): void {
  const key = requireMergeKey(element, list.mergeKey, list.path);
  const items = Array.isArray(merged) ? merged : merged.items();
  const position = items.findIndex(
    (item) =>
      isObject(item) && Object.hasOwn(item, list.mergeKey) && sameValue(item[list.mergeKey], key, list.path),
  );
  const target = items[position];
  if (!isObject(target)) {
    merged.push(element);
    return;
  }
  const path = elementPath(list.path, { key: list.mergeKey, value: key });
  mergeObject(target, element, { type: list.items, path });
}

/**
 * The original list while kubectl edits it in place: a deletion shifts the later elements down
 * and leaves the last slot as it was (Go's append(s[:i], s[i+1:]...)), and appended elements
 * fill the slots so freed. $setElementOrder orders by these edited slots, so the merge keeps them
 * to place elements exactly where kubectl does.
 */
class EditedList {
  readonly slots: JsonValue[];
  private length: number;
  private readonly grown: JsonValue[] = [];

  constructor(original: readonly JsonValue[]) {
    this.slots = [...original];
    this.length = original.length;
  }

  items(): JsonValue[] {
    return [...this.slots.slice(0, this.length), ...this.grown];
  }

  push(value: JsonValue): void {
    if (this.length < this.slots.length) this.slots[this.length] = value;
    else this.grown.push(value);
    this.length++;
  }

  deleteMatching(mergeKey: string, key: JsonValue, path: string): void {
    const matches = (item: JsonValue): boolean =>
      isObject(item) && Object.hasOwn(item, mergeKey) && sameValue(item[mergeKey], key, path);
    for (let index = this.items().findIndex(matches); index >= 0; index = this.items().findIndex(matches)) {
      this.slots.copyWithin(index, index + 1, this.length);
      this.length--;
    }
  }
}

/**
 * `$setElementOrder/<list>`: merges the list as usual, then orders it — the elements the
 * directive names in its order, the others interleaved by the original's.
 */
function applyElementOrders(original: JsonObject, patch: JsonObject, at: Place): void {
  for (const directive of Object.keys(patch)) {
    const key = directiveTarget(directive, SET_ELEMENT_ORDER, at.path);
    // A directive may name another directive's list, which is gone once that one is handled.
    if (key === undefined || !Object.hasOwn(patch, directive)) continue;
    const order = patch[directive];
    removeField(patch, directive);
    const path = childPath(at.path, key);
    if (!Array.isArray(order)) throw new StrategicMergeError(path, `${directive} must be a list`);
    const ordered = orderedList(original, patch, { key, order, at, path });
    if (ordered !== undefined) setField(original, key, ordered);
    removeField(patch, key);
  }
}

interface ElementOrder {
  key: string;
  order: JsonValue[];
  at: Place;
  path: string;
}

function orderedList(
  original: JsonObject,
  patch: JsonObject,
  request: ElementOrder,
): JsonValue[] | undefined {
  const { key, order, path } = request;
  const originalList = listField(original, key, path);
  const patchList = listField(patch, key, path);
  const field = lookupListField(request.at.type, key, path);
  checkOrderCoversPatch(patchList ?? [], order, field.mergeKey, path);
  if (originalList === undefined && patchList === undefined) return undefined;
  const list: ListMerge = { items: field.type, mergeKey: field.mergeKey, deleting: false, path };
  let merged: MergedList;
  if (patchList === undefined) merged = { merged: originalList ?? [], editedOriginal: originalList ?? [] };
  else if (originalList === undefined)
    merged = { merged: listWithoutDirectives(patchList), editedOriginal: [] };
  else if (field.strategy === 'merge') merged = mergeList(originalList, patchList, list);
  else merged = { merged: patchList, editedOriginal: originalList };
  const objects = elementKind([merged.editedOriginal, patchList ?? []], path) === 'object';
  const identity = { mergeKey: field.mergeKey, objects, path };
  return orderMergedList(merged.merged, { patchOrder: order, serverOrder: merged.editedOriginal }, identity);
}

function listField(object: JsonObject, key: string, path: string): JsonValue[] | undefined {
  const value = fieldOf(object, key);
  if (value !== undefined && !Array.isArray(value)) {
    throw new StrategicMergeError(
      path,
      `${SET_ELEMENT_ORDER}/${key} applies to a list, not ${kindOf(value)}`,
    );
  }
  return value;
}

function listWithoutDirectives(list: JsonValue[]): JsonValue[] {
  return withoutDirectives(list) as JsonValue[];
}

/**
 * The patch's elements (but deletions and elements with directives) must appear in the
 * $setElementOrder list, in the same relative order.
 */
function checkOrderCoversPatch(patch: JsonValue[], order: JsonValue[], mergeKey: string, path: string): void {
  if (order.length === 0 || patch.length === 0) return;
  const listed = mergeKey === '' ? patch : patch.filter((element) => !isDeleteElement(element, path));
  let next = 0;
  let position = 0;
  while (next < listed.length && position < order.length) {
    const element = listed[next] as JsonValue;
    if (hasDirective(element)) {
      next++;
      continue;
    }
    if (sameIdentity(element, order[position] as JsonValue, mergeKey, path)) next++;
    position++;
  }
  if (next < listed.length) {
    throw new StrategicMergeError(
      path,
      `the order of the patch's elements does not match ${SET_ELEMENT_ORDER}`,
    );
  }
}

function isDeleteElement(element: JsonValue, path: string): boolean {
  if (!isObject(element))
    throw new StrategicMergeError(path, `list element ${JSON.stringify(element)} is not an object`);
  return fieldOf(element, PATCH) === 'delete';
}

function hasDirective(element: JsonValue): boolean {
  return isObject(element) && Object.hasOwn(element, PATCH);
}

function sameIdentity(left: JsonValue, right: JsonValue, mergeKey: string, path: string): boolean {
  if (mergeKey === '') return sameValue(left, right, path);
  return sameValue(requireMergeKey(left, mergeKey, path), requireMergeKey(right, mergeKey, path), path);
}

function show(value: JsonValue): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}
