/**
 * The order of a merged list, as kubectl produces it. The elements the patch names keep the
 * patch's order (or its $setElementOrder), the others keep the original's, and the two runs are
 * interleaved by the original's order — an element new to the list goes before the original
 * elements still to be placed, so additions come first rather than last.
 *
 * kubectl sorts with a comparison that calls every unlisted element "less"; it is not a
 * consistent order, so the result depends on the sorting algorithm itself. `goStableSort` is Go's
 * sort.SliceStable step for step (insertion sort in blocks of 20, then SymMerge), so even those
 * lists come out as kubectl orders them.
 */
import { StrategicMergeError } from './errors.ts';
import { fieldOf, isObject, sameValue, type JsonValue } from './json.ts';

/** How the elements of a list are identified. */
export interface ListIdentity {
  /** The merge key; "" for lists of scalars, whose elements are their own identity. */
  mergeKey: string;
  /** Whether the elements are objects (compared by merge key) rather than scalars. */
  objects: boolean;
  path: string;
}

/** The orders that decide a merged list's order. */
export interface ListOrders {
  /** The patch's list, or its $setElementOrder list. */
  patchOrder: readonly JsonValue[];
  /** The original list. */
  serverOrder: readonly JsonValue[];
}

/** Orders `merged`: the elements `patchOrder` names, then interleaves the others by the original. */
export function orderMergedList(
  merged: JsonValue[],
  orders: ListOrders,
  identity: ListIdentity,
): JsonValue[] {
  const [named, others] = partition(merged, orders.patchOrder, identity);
  const patchItems = sortByOrder(named, orders.patchOrder, identity);
  const serverItems = sortByOrder(others, orders.serverOrder, identity);
  return interleave(serverItems, patchItems, orders.serverOrder, identity);
}

/** Splits `list` into the elements that `names` lists and the others, each in list order. */
function partition(
  list: JsonValue[],
  names: readonly JsonValue[],
  identity: ListIdentity,
): [JsonValue[], JsonValue[]] {
  const named: JsonValue[] = [];
  const others: JsonValue[] = [];
  for (const element of list) {
    (isNamed(element, names, identity) ? named : others).push(element);
  }
  return [named, others];
}

function isNamed(element: JsonValue, names: readonly JsonValue[], identity: ListIdentity): boolean {
  const { mergeKey, path } = identity;
  if (mergeKey === '') {
    if (typeof element === 'object' && element !== null) {
      throw new StrategicMergeError(path, 'cannot order a list of objects that has no merge key');
    }
    return names.some((name) => sameValue(name, element, path));
  }
  const key = requireMergeKey(element, mergeKey, path);
  for (const name of names) {
    if (!isObject(name))
      throw new StrategicMergeError(path, `list element ${JSON.stringify(name)} is not an object`);
    if (Object.hasOwn(name, mergeKey) && sameValue(name[mergeKey], key, path)) return true;
  }
  return false;
}

/** The element's merge key value. @throws StrategicMergeError when it is not an object with one */
export function requireMergeKey(element: JsonValue, mergeKey: string, path: string): JsonValue {
  if (!isObject(element))
    throw new StrategicMergeError(path, `list element ${JSON.stringify(element)} is not an object`);
  const value = fieldOf(element, mergeKey);
  if (value === undefined) {
    throw new StrategicMergeError(
      path,
      `list element ${JSON.stringify(element)} has no merge key "${mergeKey}"`,
    );
  }
  return value;
}

/**
 * Sorts by position in `order`; elements marked `$patch: delete` go last. Object lists must have
 * the merge key everywhere, in `order` too.
 */
function sortByOrder(items: JsonValue[], order: readonly JsonValue[], identity: ListIdentity): JsonValue[] {
  let kept = items;
  let deleted: JsonValue[] = [];
  if (identity.objects) {
    for (const element of [...items, ...order]) requireMergeKey(element, identity.mergeKey, identity.path);
    kept = items.filter((element) => !isDeleteMarker(element));
    deleted = items.filter(isDeleteMarker);
  }
  const sorted = [...kept];
  goStableSort(sorted, (left, right) => {
    const leftIndex = indexIn(order, left, identity);
    if (leftIndex < 0) return true;
    const rightIndex = indexIn(order, right, identity);
    return rightIndex < 0 || leftIndex < rightIndex;
  });
  return [...sorted, ...deleted];
}

function isDeleteMarker(element: JsonValue): boolean {
  return isObject(element) && fieldOf(element, '$patch') === 'delete';
}

/** The first position in `list` of the element with `item`'s identity; -1 when absent. */
function indexIn(list: readonly JsonValue[], item: JsonValue, identity: ListIdentity): number {
  const { objects, mergeKey, path } = identity;
  const identityOf = (element: JsonValue): JsonValue | undefined =>
    objects ? (isObject(element) ? fieldOf(element, mergeKey) : undefined) : element;
  const wanted = identityOf(item);
  return list.findIndex((element) => sameValue(identityOf(element), wanted, path));
}

/**
 * Merges the original-only elements (`left`) into the patch's (`right`): the next original
 * element goes first only when both are in the original and it comes earlier there.
 */
function interleave(
  left: JsonValue[],
  right: JsonValue[],
  serverOrder: readonly JsonValue[],
  identity: ListIdentity,
): JsonValue[] {
  const result: JsonValue[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    const l = left[i];
    const r = right[j];
    if (r === undefined || (l !== undefined && earlierInOriginal(l, r, serverOrder, identity))) {
      result.push(l as JsonValue);
      i++;
    } else {
      result.push(r);
      j++;
    }
  }
  return result;
}

function earlierInOriginal(
  l: JsonValue,
  r: JsonValue,
  order: readonly JsonValue[],
  identity: ListIdentity,
): boolean {
  const li = indexIn(order, l, identity);
  const ri = indexIn(order, r, identity);
  return li >= 0 && ri >= 0 && li < ri;
}

/**
 * Go's sort.SliceStable: insertion sort over blocks of 20, then SymMerge of ever larger runs.
 * Only this exact sequence of comparisons and swaps gives kubectl's order when `less` is not a
 * consistent order.
 */
export function goStableSort<T>(data: T[], less: (left: T, right: T) => boolean): void {
  const n = data.length;
  const sorter = new GoSorter(data, less);
  let blockSize = 20;
  let a = 0;
  for (let b = blockSize; b <= n; a = b, b += blockSize) sorter.insertionSort(a, b);
  sorter.insertionSort(a, n);
  for (; blockSize < n; blockSize *= 2) {
    a = 0;
    for (let b = 2 * blockSize; b <= n; a = b, b += 2 * blockSize) sorter.symMerge(a, a + blockSize, b);
    if (a + blockSize < n) sorter.symMerge(a, a + blockSize, n);
  }
}

class GoSorter<T> {
  private readonly data: T[];
  private readonly lessThan: (left: T, right: T) => boolean;

  constructor(data: T[], less: (left: T, right: T) => boolean) {
    this.data = data;
    this.lessThan = less;
  }

  insertionSort(a: number, b: number): void {
    for (let i = a + 1; i < b; i++) {
      for (let j = i; j > a && this.less(j, j - 1); j--) this.swap(j, j - 1);
    }
  }

  /** Merges the sorted runs [a, m) and [m, b) in place (Kim and Kutzner's SymMerge). */
  symMerge(a: number, m: number, b: number): void {
    if (m - a === 1) {
      this.insertFirst(a, m, b);
      return;
    }
    if (b - m === 1) {
      this.insertLast(a, m);
      return;
    }
    const mid = (a + b) >>> 1;
    const n = mid + m;
    const start = this.splitPoint(a, m, b);
    const end = n - start;
    if (start < m && m < end) this.rotate(start, m, end);
    if (a < start && start < mid) this.symMerge(a, start, mid);
    if (mid < end && end < b) this.symMerge(mid, end, b);
  }

  /** SymMerge's binary search for where the two runs exchange their middle parts. */
  private splitPoint(a: number, m: number, b: number): number {
    const mid = (a + b) >>> 1;
    const n = mid + m;
    let start = m > mid ? n - b : a;
    let r = m > mid ? mid : m;
    const p = n - 1;
    while (start < r) {
      const c = (start + r) >>> 1;
      if (!this.less(p - c, c)) start = c + 1;
      else r = c;
    }
    return start;
  }

  /** [a] joins the sorted run [m, b) at its place. */
  private insertFirst(a: number, m: number, b: number): void {
    let i = m;
    let j = b;
    while (i < j) {
      const h = (i + j) >>> 1;
      if (this.less(h, a)) i = h + 1;
      else j = h;
    }
    for (let k = a; k < i - 1; k++) this.swap(k, k + 1);
  }

  /** [m] joins the sorted run [a, m) at its place. */
  private insertLast(a: number, m: number): void {
    let i = a;
    let j = m;
    while (i < j) {
      const h = (i + j) >>> 1;
      if (!this.less(m, h)) i = h + 1;
      else j = h;
    }
    for (let k = m; k > i; k--) this.swap(k, k - 1);
  }

  private rotate(a: number, m: number, b: number): void {
    let i = m - a;
    let j = b - m;
    while (i !== j) {
      if (i > j) {
        this.swapRange(m - i, m, j);
        i -= j;
      } else {
        this.swapRange(m - i, m + j - i, i);
        j -= i;
      }
    }
    this.swapRange(m - i, m, i);
  }

  private swapRange(a: number, b: number, n: number): void {
    for (let i = 0; i < n; i++) this.swap(a + i, b + i);
  }

  private less(i: number, j: number): boolean {
    return this.lessThan(this.data[i] as T, this.data[j] as T);
  }

  private swap(i: number, j: number): void {
    const data = this.data;
    [data[i], data[j]] = [data[j] as T, data[i] as T];
  }
}
