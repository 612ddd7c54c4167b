/**
 * AIP-160 list filters: a hand-written recursive-descent parser over the AIP-160 grammar, and a
 * compiler that checks fields and value types against a schema and yields a predicate.
 *
 *   expression  = sequence { "AND" sequence }
 *   sequence    = factor { factor }            (juxtaposition means AND)
 *   factor      = term { "OR" term }           (OR binds tighter than AND)
 *   term        = [ "NOT" | "-" ] simple
 *   simple      = restriction | "(" expression ")"
 *   restriction = member [ comparator arg ]
 *   comparator  = "<=" | "<" | ">=" | ">" | "!=" | "=" | "==" | ":"
 *
 * Values may be quoted ("…" or '…') or bare; bare values may contain `. : - + *` so that
 * versions, durations and timestamps need no quotes, as the Python client writes them.
 *
 * A filter is bounded (FILTER_LIMITS): its length, its number of restrictions and how deep its
 * parentheses nest. Runs of AND or OR become one node with many operands, so neither parsing
 * nor matching recurses deeper than the parentheses do, whatever the caller sends.
 */
import { invalidArgument, type ApiError } from '../errors/api-error.ts';
import { compareVersions } from '../../../shared/semver.ts';

export type Comparator = '<=' | '<' | '>=' | '>' | '!=' | '=' | ':';

/** What a filter may hold; more is refused as INVALID_ARGUMENT before anything is matched. */
export const FILTER_LIMITS = {
  /** Characters (a REST query string cannot carry much more anyway). */
  length: 16_384,
  /** Comparisons such as `cpu > 1`. */
  restrictions: 1_000,
  /** Parentheses inside parentheses. */
  depth: 32,
} as const;

/** The parsed filter. */
export type FilterNode =
  | { type: 'and' | 'or'; operands: FilterNode[] }
  | { type: 'not'; operand: FilterNode }
  | { type: 'restriction'; field: string; at: number; comparator?: Comparator; value?: Value };

interface Value {
  text: string;
  quoted: boolean;
  at: number;
}

type TokenKind = 'text' | 'string' | 'comparator' | '(' | ')' | '-' | 'end';
interface Token {
  kind: TokenKind;
  text: string;
  at: number;
}

/** A filter that cannot be parsed or does not fit the schema; `at` is a 1-based column. */
export class FilterError extends Error {
  readonly at: number;
  constructor(message: string, at: number) {
    super(`${message} (at column ${at})`);
    this.at = at;
  }
  toApiError(): ApiError {
    return invalidArgument('filter', this.message);
  }
}

const COMPARATORS = ['<=', '>=', '!=', '==', '<', '>', '=', ':'] as const;
/** Characters that end a bare value. */
const BREAK = /[\s()=<>!"']/;

/** The token at `i` (not whitespace), and where the next one starts. */
function readToken(source: string, i: number, previous: Token | undefined): { token: Token; next: number } {
  const c = source.charAt(i);
  const at = i + 1;
  if (c === '(' || c === ')') return { token: { kind: c, text: c, at }, next: i + 1 };
  if (c === '"' || c === "'") return readString(source, i);
  const comparator = COMPARATORS.find((op) => source.startsWith(op, i));
  // `==` is accepted as a spelling of `=`.
  if (comparator !== undefined)
    return {
      token: { kind: 'comparator', text: comparator.replace('==', '='), at },
      next: i + comparator.length,
    };
  // A minus sign before a value is part of it (`cpu > -1`); elsewhere it negates.
  if (c === '-' && previous?.kind !== 'comparator') return { token: { kind: '-', text: c, at }, next: i + 1 };
  const end = bareEnd(source, i);
  if (end === i) throw new FilterError(`unexpected "${c}"`, at);
  return { token: { kind: 'text', text: source.slice(i, end), at }, next: end };
}

function readString(source: string, i: number): { token: Token; next: number } {
  const end = source.indexOf(source.charAt(i), i + 1);
  if (end < 0) throw new FilterError('unterminated string', i + 1);
  return { token: { kind: 'string', text: source.slice(i + 1, end), at: i + 1 }, next: end + 1 };
}

/** The end of a bare word: a ':' ends a field name (`name:value`) but not a timestamp. */
function bareEnd(source: string, start: number): number {
  const isName = /[A-Za-z_]/.test(source.charAt(start));
  let end = start;
  while (end < source.length) {
    const c = source.charAt(end);
    if (BREAK.test(c) || (isName && c === ':')) break;
    end++;
  }
  return end;
}

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    if (/\s/.test(source.charAt(i))) {
      i++;
      continue;
    }
    const { token, next } = readToken(source, i, tokens.at(-1));
    tokens.push(token);
    i = next;
  }
  tokens.push({ kind: 'end', text: '', at: source.length + 1 });
  return tokens;
}

class Parser {
  private readonly tokens: Token[];
  private index = 0;
  private depth = 0;
  private restrictions = 0;

  constructor(source: string) {
    if (source.length > FILTER_LIMITS.length) {
      throw new FilterError(
        `the filter is longer than ${FILTER_LIMITS.length} characters`,
        FILTER_LIMITS.length + 1,
      );
    }
    this.tokens = tokenize(source);
  }

  parse(): FilterNode | undefined {
    if (this.peek().kind === 'end') return undefined;
    const node = this.expression();
    const rest = this.peek();
    if (rest.kind !== 'end') throw new FilterError(`unexpected "${rest.text}"`, rest.at);
    return node;
  }

  private peek(): Token {
    return this.tokens[this.index] ?? { kind: 'end', text: '', at: 0 };
  }

  private next(): Token {
    const token = this.peek();
    this.index++;
    return token;
  }

  private isKeyword(word: string): boolean {
    const token = this.peek();
    return token.kind === 'text' && token.text === word;
  }

  private expression(): FilterNode {
    const operands = [this.sequence()];
    while (this.isKeyword('AND')) {
      this.next();
      operands.push(this.sequence());
    }
    return joined('and', operands);
  }

  private sequence(): FilterNode {
    const operands = [this.factor()];
    while (this.startsTerm()) operands.push(this.factor());
    return joined('and', operands);
  }

  private startsTerm(): boolean {
    const token = this.peek();
    if (token.kind === '(' || token.kind === '-' || token.kind === 'string') return true;
    return token.kind === 'text' && token.text !== 'AND' && token.text !== 'OR';
  }

  private factor(): FilterNode {
    const operands = [this.term()];
    while (this.isKeyword('OR')) {
      this.next();
      operands.push(this.term());
    }
    return joined('or', operands);
  }

  private term(): FilterNode {
    if (this.isKeyword('NOT') || this.peek().kind === '-') {
      this.next();
      return { type: 'not', operand: this.simple() };
    }
    return this.simple();
  }

  private simple(): FilterNode {
    const token = this.next();
    if (token.kind === '(') return this.parenthesised(token);
    if (token.kind !== 'text' || ['AND', 'OR', 'NOT'].includes(token.text)) {
      throw new FilterError(
        token.kind === 'end' ? 'the filter ends too early' : `expected a field, got "${token.text}"`,
        token.at,
      );
    }
    if (++this.restrictions > FILTER_LIMITS.restrictions) {
      throw new FilterError(`the filter has more than ${FILTER_LIMITS.restrictions} restrictions`, token.at);
    }
    if (this.peek().kind !== 'comparator') return { type: 'restriction', field: token.text, at: token.at };
    const comparator = this.next().text as Comparator;
    const value = this.next();
    if (value.kind !== 'text' && value.kind !== 'string') {
      throw new FilterError(`expected a value after "${comparator}"`, value.at);
    }
    return {
      type: 'restriction',
      field: token.text,
      at: token.at,
      comparator,
      value: { text: value.text, quoted: value.kind === 'string', at: value.at },
    };
  }

  private parenthesised(open: Token): FilterNode {
    if (++this.depth > FILTER_LIMITS.depth) {
      throw new FilterError(`parentheses nest deeper than ${FILTER_LIMITS.depth}`, open.at);
    }
    const node = this.expression();
    const close = this.next();
    if (close.kind !== ')') throw new FilterError('expected ")"', close.at);
    this.depth--;
    return node;
  }
}

/** One operand as itself; several, joined; operands of the same join are flattened into it. */
function joined(type: 'and' | 'or', operands: FilterNode[]): FilterNode {
  if (operands.length === 1) return operands[0] as FilterNode;
  return { type, operands: operands.flatMap((o) => (o.type === type ? o.operands : [o])) };
}

/** Parses an AIP-160 filter; `undefined` for an empty one. */
export function parseFilter(source: string): FilterNode | undefined {
  return new Parser(source).parse();
}

/** How a filterable field reads and compares. */
export type FieldType = 'string' | 'int' | 'bool' | 'enum' | 'timestamp' | 'duration' | 'version';

export interface FilterField<T> {
  type: FieldType;
  /** The field's value; `undefined` when unset (then only `!=` matches). */
  get(item: T): string | number | bigint | boolean | Date | undefined;
  /** Enum names, for `enum` fields. */
  values?: readonly string[];
}

export type FilterSchema<T> = Readonly<Record<string, FilterField<T>>>;

/** A field's value in the form that compares by the field's type. */
export type Comparable = string | bigint | boolean | number;

/** The value of a field as the comparable form of its type. */
function normalize(type: FieldType, raw: string | number | bigint | boolean | Date): Comparable {
  if (raw instanceof Date) return raw.getTime();
  if (type === 'int') return BigInt(raw);
  if (type === 'duration' && typeof raw === 'string') return durationNanos(raw) ?? raw;
  return raw;
}

function durationNanos(text: string): bigint | undefined {
  const match = /^(-)?(\d+)(?:\.(\d{1,9}))?s$/.exec(text);
  if (!match) return undefined;
  const nanos = BigInt(match[2] ?? '0') * 1_000_000_000n + BigInt((match[3] ?? '').padEnd(9, '0'));
  return match[1] ? -nanos : nanos;
}

/** Reads a literal of each type; `undefined` when the text is not one. */
const LITERALS: Record<FieldType, { expected: string; read: (text: string) => Comparable | undefined }> = {
  int: { expected: 'an integer', read: (t) => (/^-?\d+$/.test(t) ? BigInt(t) : undefined) },
  bool: { expected: 'true or false', read: (t) => (t === 'true' ? true : t === 'false' ? false : undefined) },
  enum: { expected: 'an enum value', read: (t) => t },
  timestamp: {
    expected: 'an RFC 3339 timestamp',
    read: (t) => (/^\d{4}-\d{2}-\d{2}T/.test(t) && !Number.isNaN(Date.parse(t)) ? Date.parse(t) : undefined),
  },
  duration: { expected: 'a duration such as "3600s"', read: durationNanos },
  // Notebook engines' versions are image ids, so a version may also be a word.
  version: {
    expected: 'a version such as 1.10.6 (or an image id)',
    read: (t) => (/^[0-9A-Za-z][0-9A-Za-z._+-]*$/.test(t) ? t : undefined),
  },
  string: { expected: 'a string', read: (t) => t },
};

/** A filter value as the comparable form of the field's type, or a FilterError. */
function literal(field: string, spec: FilterField<unknown>, value: Value): Comparable {
  const { expected, read } = LITERALS[spec.type];
  const known = spec.type !== 'enum' || (spec.values ?? []).includes(value.text);
  const result = known ? read(value.text) : undefined;
  if (result === undefined) {
    const what = spec.type === 'enum' ? `one of ${(spec.values ?? []).join(', ')}` : expected;
    throw new FilterError(`${field} compares with ${what}, got "${value.text}"`, value.at);
  }
  return result;
}

function compare(type: FieldType, a: Comparable, b: Comparable): number {
  if (type === 'version') return compareVersions(String(a), String(b));
  if (typeof a === 'boolean' || typeof b === 'boolean') return a === b ? 0 : a ? 1 : -1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** String equality with a leading or trailing `*` as a wildcard. */
function wildcardEquals(actual: string, pattern: string): boolean {
  if (pattern.length > 1 && pattern.endsWith('*')) return actual.startsWith(pattern.slice(0, -1));
  if (pattern.length > 1 && pattern.startsWith('*')) return actual.endsWith(pattern.slice(1));
  return actual === pattern;
}

function test(op: Comparator, order: number): boolean {
  switch (op) {
    case '<':
      return order < 0;
    case '<=':
      return order <= 0;
    case '>':
      return order > 0;
    case '>=':
      return order >= 0;
    case '!=':
      return order !== 0;
    case '=':
    case ':':
      return order === 0;
  }
}

type Predicate<T> = (item: T) => boolean;

function compileRestriction<T>(
  node: Extract<FilterNode, { type: 'restriction' }>,
  schema: FilterSchema<T>,
): Predicate<T> {
  // Own fields only: `constructor` or `__proto__` name no field.
  const spec = Object.hasOwn(schema, node.field) ? schema[node.field] : undefined;
  if (spec === undefined) {
    throw new FilterError(
      `unknown field "${node.field.slice(0, 64)}"; filterable: ${Object.keys(schema).join(', ')}`,
      node.at,
    );
  }
  const { comparator, value } = node;
  if (comparator === undefined || value === undefined) {
    if (spec.type !== 'bool') throw new FilterError(`${node.field} needs a comparison`, node.at);
    return (item) => spec.get(item) === true;
  }
  const expected = literal(node.field, spec, value);
  const isPattern =
    spec.type === 'string' && (comparator === '=' || comparator === '!=') && value.text.includes('*');
  const comparable = comparableWith(node.field, spec, comparator, value);
  return (item) => {
    const raw = spec.get(item);
    if (raw === undefined) return comparator === '!=';
    // A number compares with a bigint as it is: no BigInt is made for each item a list tests.
    const actual = spec.type === 'int' && typeof raw === 'number' ? raw : normalize(spec.type, raw);
    if (isPattern) return wildcardEquals(String(actual), value.text) === (comparator === '=');
    return comparable(actual) && test(comparator, compare(spec.type, actual, expected));
  };
}

/** A release number, which `<`, `>` and the like order: `1.10.6`, `1.10.6.1-rc.1+build`. */
const RELEASE = /^\d+(\.\d+)*(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;
const ORDERING: readonly Comparator[] = ['<', '<=', '>', '>='];

/**
 * Which values an ordering comparison applies to. A version that is no release number (a
 * notebook engine's version is its image id) is equal only to itself and in no order with
 * releases, so `version >= 0.1.0` leaves it out; ordering by a word is refused.
 */
function comparableWith(
  field: string,
  spec: FilterField<unknown>,
  comparator: Comparator,
  value: Value,
): (actual: Comparable) => boolean {
  if (spec.type !== 'version' || !ORDERING.includes(comparator)) return () => true;
  if (!RELEASE.test(value.text)) {
    throw new FilterError(
      `${field} ${comparator} needs a release number such as 1.10.6, got "${value.text}"`,
      value.at,
    );
  }
  return (actual) => RELEASE.test(String(actual));
}

function compileNode<T>(node: FilterNode, schema: FilterSchema<T>): Predicate<T> {
  switch (node.type) {
    case 'and': {
      const operands = node.operands.map((o) => compileNode(o, schema));
      return (item) => operands.every((p) => p(item));
    }
    case 'or': {
      const operands = node.operands.map((o) => compileNode(o, schema));
      return (item) => operands.some((p) => p(item));
    }
    case 'not': {
      const operand = compileNode(node.operand, schema);
      return (item) => !operand(item);
    }
    case 'restriction':
      return compileRestriction(node, schema);
  }
}

/**
 * A predicate for `filter` over items described by `schema`.
 *
 * @throws ApiError INVALID_ARGUMENT naming `filter`, with the column of the problem
 */
export function compileFilter<T>(filter: string, schema: FilterSchema<T>): Predicate<T> {
  try {
    const node = parseFilter(filter);
    return node === undefined ? () => true : compileNode(node, schema);
  } catch (error: unknown) {
    if (error instanceof FilterError) throw error.toApiError();
    throw error;
  }
}

/** An item's value of a field in the form that compares by the field's type; unset stays so. */
export function sortValue<T>(spec: FilterField<T>, item: T): Comparable | undefined {
  const raw = spec.get(item);
  return raw === undefined ? undefined : normalize(spec.type, raw);
}

/** The order of two sort values of a field; unset values sort first. */
export function compareSortValues(
  type: FieldType,
  a: Comparable | undefined,
  b: Comparable | undefined,
): number {
  if (a === undefined || b === undefined) return (a === undefined ? 0 : 1) - (b === undefined ? 0 : 1);
  return compare(type, a, b);
}
