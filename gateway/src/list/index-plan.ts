/**
 * Which index groups a filtered list may read instead of the whole workspace: a restriction
 * `field = value` that every match must satisfy (one the filter's top-level AND holds), on a
 * field an index groups by, limits the matches to that value's group. The filter is still
 * applied to every item read, so the group only has to hold all matches, not only matches.
 */
import type { OrderedRun } from './ordered-index.ts';
import { parseFilter, sortValue, type FilterField, type FilterNode, type FilterSchema } from './filter.ts';

/** `field = value`, where `value` is the field's value as {@link groupValue} spells it. */
export interface Equality {
  field: string;
  value: string;
}

/** Field types whose equality is equality of their text (no numbers, versions or patterns). */
const GROUPABLE_TYPES: ReadonlySet<string> = new Set(['string', 'enum']);

/** The value an item's group of `field` is named by; `undefined` (unset) is in no group. */
export function groupValue<T>(spec: FilterField<T>, item: T): string | undefined {
  const value = sortValue(spec, item);
  return value === undefined ? undefined : String(value);
}

/**
 * The equalities on `fields` (of `schema`) that every item matching `filter` satisfies, and
 * whether the filter is nothing but one of them (then every item of its group matches). The
 * filter must have compiled already: this only reads what it asks.
 */
export function requiredEqualities<T>(
  filter: string,
  schema: FilterSchema<T>,
  fields: readonly string[],
): { equalities: Equality[]; alone: boolean } {
  const node = parseFilter(filter);
  if (node === undefined) return { equalities: [], alone: false };
  const conjuncts = node.type === 'and' ? node.operands : [node];
  const equalities = conjuncts.flatMap((conjunct) => {
    const equality = asEquality(conjunct, schema, fields);
    return equality === undefined ? [] : [equality];
  });
  return { equalities, alone: conjuncts.length === 1 && equalities.length === 1 };
}

/** Whether items equal to `text` in a field of `spec` are exactly those of one group. */
function groupable(spec: FilterField<unknown>, text: string): boolean {
  // `creator = al*` is a pattern, which no single group holds.
  return GROUPABLE_TYPES.has(spec.type) && !(spec.type === 'string' && text.includes('*'));
}

function asEquality<T>(
  node: FilterNode,
  schema: FilterSchema<T>,
  fields: readonly string[],
): Equality | undefined {
  if (node.type !== 'restriction' || node.value === undefined) return undefined;
  if (node.comparator !== '=' && node.comparator !== ':') return undefined;
  const spec =
    fields.includes(node.field) && Object.hasOwn(schema, node.field) ? schema[node.field] : undefined;
  return spec !== undefined && groupable(spec, node.value.text)
    ? { field: node.field, value: node.value.text }
    : undefined;
}

/** A group a page may read: a field's value (none: the whole workspace), and whether every
 * item of it is to be shown (then no item needs testing and the total is the group's size). */
export interface GroupChoice {
  field?: string;
  value: string;
  everyMatches: boolean;
}

/** Whom a list is for: `all` sees every item; else `creator`, when it sees its own items only. */
export interface Viewer {
  all: boolean;
  creator?: string | undefined;
}

/**
 * The groups that each hold every item a list shows (those `filter` matches that `viewer` sees),
 * the whole workspace first: a page reads whichever is smallest ({@link narrowest}).
 */
export function pageGroups<T>(
  filter: string,
  schema: FilterSchema<T> | undefined,
  fields: readonly string[],
  viewer: Viewer,
): GroupChoice[] {
  const unfiltered = schema === undefined || filter.trim() === '';
  const { equalities, alone } = schema
    ? requiredEqualities(filter, schema, fields)
    : { equalities: [], alone: false };
  const groups: GroupChoice[] = [
    { value: '', everyMatches: viewer.all && unfiltered },
    ...equalities.map((e) => ({ ...e, everyMatches: viewer.all && alone })),
  ];
  // A caller who sees only its own items sees nothing outside its creator group.
  if (!viewer.all && viewer.creator !== undefined && schema !== undefined && fields.includes('creator')) {
    groups.push({ field: 'creator', value: viewer.creator, everyMatches: unfiltered });
  }
  return groups;
}

/** The smallest of the runs (of {@link pageGroups}), one whose items all match on a tie. */
export function narrowest<T>(
  candidates: readonly { run: OrderedRun<T>; everyMatches: boolean }[],
): { run: OrderedRun<T>; everyMatches: boolean } | undefined {
  return candidates.reduce<{ run: OrderedRun<T>; everyMatches: boolean } | undefined>((best, c) => {
    if (best === undefined || c.run.size < best.run.size) return c;
    return c.run.size === best.run.size && c.everyMatches && !best.everyMatches ? c : best;
  }, undefined);
}
