/**
 * The fields engine lists filter and order by (AIP-160 / AIP-132), per list, as the Python
 * client names them.
 */
import type { FilterField, FilterSchema } from '../list/filter.ts';
import { durationNanos, type Duration } from '../validation/constraints.ts';
import { idOf } from '../../../shared/resource-name.ts';

/** What every engine message offers to lists (a kind has a subset). */
export interface ListedEngine {
  name: string;
  uid: string;
  state: number | string;
  creator: string;
  creatorDisplayName: string;
  displayName: string;
  reconciling: boolean;
  cpu?: number | undefined;
  gpu?: number | undefined;
  memoryBytes?: string | undefined;
  storageBytes?: string | undefined;
  nodeCount?: number | undefined;
  createTime?: Date | undefined;
  updateTime?: Date | undefined;
  deleteTime?: Date | undefined;
  resumeTime?: Date | undefined;
  maxIdleDuration?: Duration | undefined;
  maxRunningDuration?: Duration | undefined;
  currentIdleDuration?: Duration | undefined;
  currentRunningDuration?: Duration | undefined;
  version?: string;
  deprecatedVersion?: boolean;
  type?: number | string;
}

type Field = FilterField<ListedEngine>;

const text = (get: (e: ListedEngine) => string | undefined): Field => ({ type: 'string', get });
const int = (get: (e: ListedEngine) => number | string | undefined): Field => ({ type: 'int', get });
const time = (get: (e: ListedEngine) => Date | undefined): Field => ({ type: 'timestamp', get });
const duration = (get: (e: ListedEngine) => Duration | undefined): Field => ({
  type: 'duration',
  get: (e) => {
    const d = get(e);
    return d === undefined ? undefined : durationNanos(d);
  },
});
const id = (e: ListedEngine): string => idOf(e.name);

/** Every field any engine list knows; each list picks its own. */
function allFields(states: Record<string, number>, types: Record<string, number>): Record<string, Field> {
  const names = Object.keys(states).filter((n) => n !== 'UNRECOGNIZED');
  // Looked up for every engine a filter tests: a map (the first name of a value), not a search.
  const byValue = new Map(names.toReversed().map((n) => [states[n], n]));
  const stateName = (value: number | string): string =>
    typeof value === 'string' ? value : (byValue.get(value) ?? '');
  const typeNames = Object.keys(types).filter((n) => n !== 'UNRECOGNIZED');
  return {
    name: text((e) => e.name),
    dai_engine_id: text(id),
    h2o_engine_id: text(id),
    engine_id: text(id),
    state: { type: 'enum', values: names, get: (e) => stateName(e.state) },
    type: {
      type: 'enum',
      values: typeNames,
      get: (e) => (typeof e.type === 'number' ? typeNames.find((n) => types[n] === e.type) : e.type),
    },
    cpu: int((e) => e.cpu),
    gpu: int((e) => e.gpu),
    memory_bytes: int((e) => e.memoryBytes),
    memoryBytes: int((e) => e.memoryBytes),
    storage_bytes: int((e) => e.storageBytes),
    node_count: int((e) => e.nodeCount),
    creator: text((e) => e.creator),
    creator_display_name: text((e) => e.creatorDisplayName),
    display_name: text((e) => e.displayName),
    uid: text((e) => e.uid),
    reconciling: { type: 'bool', get: (e) => e.reconciling },
    create_time: time((e) => e.createTime),
    update_time: time((e) => e.updateTime),
    delete_time: time((e) => e.deleteTime),
    resume_time: time((e) => e.resumeTime),
    max_idle_duration: duration((e) => e.maxIdleDuration),
    max_running_duration: duration((e) => e.maxRunningDuration),
    current_idle_duration: duration((e) => e.currentIdleDuration),
    current_running_duration: duration((e) => e.currentRunningDuration),
    version: { type: 'version', get: (e) => e.version },
    deprecated_version: { type: 'bool', get: (e) => e.deprecatedVersion },
  };
}

function pick(fields: Record<string, Field>, names: string): FilterSchema<ListedEngine> {
  return Object.fromEntries(names.split(' ').map((n) => [n, fields[n] as Field]));
}

/** The filter and order fields of one engine list. */
export interface ListSchemas {
  filter: FilterSchema<ListedEngine>;
  order: FilterSchema<ListedEngine>;
}

const COMMON_FILTER =
  'name state cpu gpu memory_bytes creator creator_display_name create_time update_time delete_time reconciling uid display_name max_idle_duration max_running_duration current_idle_duration current_running_duration';

export function daiListSchemas(states: Record<string, number>): ListSchemas {
  const fields = allFields(states, {});
  return {
    filter: pick(fields, `${COMMON_FILTER} dai_engine_id storage_bytes resume_time`),
    order: pick(
      fields,
      'name cpu gpu memory_bytes storage_bytes creator create_time update_time delete_time resume_time display_name max_idle_duration max_running_duration uid',
    ),
  };
}

export function h2oListSchemas(states: Record<string, number>): ListSchemas {
  const fields = allFields(states, {});
  return {
    filter: pick(fields, `${COMMON_FILTER} h2o_engine_id node_count`),
    order: pick(
      fields,
      'name cpu gpu memory_bytes memoryBytes creator create_time update_time delete_time display_name max_idle_duration max_running_duration uid node_count',
    ),
  };
}

export function engineListSchemas(
  states: Record<string, number>,
  types: Record<string, number>,
): ListSchemas {
  const fields = allFields(states, types);
  return {
    filter: pick(
      fields,
      `${COMMON_FILTER} engine_id version deprecated_version storage_bytes resume_time type`,
    ),
    order: pick(
      fields,
      'name version cpu gpu memory_bytes storage_bytes creator create_time update_time delete_time resume_time display_name uid',
    ),
  };
}

/**
 * What ends every engine list order: newest first, then by name, so that the order is total and
 * a page token's key names one place.
 */
export const NEWEST_FIRST: readonly string[] = ['create_time desc', 'name'];

/** The fields NEWEST_FIRST reads, for lists that take no order_by (notebook engines). */
export const NEWEST_FIRST_SCHEMA: FilterSchema<ListedEngine> = pick(allFields({}, {}), 'name create_time');

/**
 * The filter fields engine lists keep index groups of (see list/index-plan.ts): those a filter
 * most often names with `=` (a state; a user's own engines).
 */
export const GROUPING_FIELDS: readonly string[] = ['state', 'creator'];
