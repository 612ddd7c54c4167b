/**
 * The canonical JSON of a message written straight to text: byte for byte what
 * `JSON.stringify(toJson(type, message))` writes (canonical.ts holds the rules), without
 * building the JSON object first. REST answers are written through it.
 *
 * Frozen messages — the watch cache's, which it replaces rather than changes — are written once:
 * their text is kept beside them (a WeakMap, so it goes with them), and a page of cached engines
 * costs little more than joining strings. What can differ from one read to the next is written
 * fresh every time: fields that are getters (an engine's running and idle durations,
 * engines/live-durations.ts) and parts that are not frozen.
 */
import { ENUMS, MESSAGES, type FieldRow } from '../gen/messages.ts';
import { durationToJson, timestampToJson } from './canonical.ts';

const DURATION = 'google.protobuf.Duration';
const TIMESTAMP = 'google.protobuf.Timestamp';
const FIELD_MASK = 'google.protobuf.FieldMask';
const HTTP_BODY = 'google.api.HttpBody';

/** A field's `"name":value`, or undefined when the field is left out of the JSON. */
type FieldText = (value: unknown) => string | undefined;
/** A value's JSON text; undefined where JSON.stringify would leave it out (or write null in a list). */
type ValueText = (value: unknown) => string | undefined;

interface FieldWriter {
  json: string;
  /** `"name":` */
  key: string;
  text: FieldText;
  /** Whether a value of this field may hold a message, whose text may be kept or live. */
  nested: boolean;
  type: string | undefined;
  kind: FieldRow['kind'];
  repeated: boolean;
}

/**
 * The text of a frozen message with parts written per read: runs of fixed fields written once,
 * the kept text of fixed messages in it (a profile snapshot many engines share is kept once, not
 * once per engine), and the fields written per read.
 */
type Template = readonly (string | Spliced | FieldWriter)[];

/** A fixed message field: its name, and the text kept with the message it holds. */
interface Spliced {
  key: string;
  text: string;
}

const writers = new Map<string, readonly FieldWriter[]>();
/** The whole text of frozen messages with nothing written per read. */
const texts = new WeakMap<object, string>();
const templates = new WeakMap<object, Template>();

/** The canonical JSON text of a message of `type`. */
export function toJsonText(type: string, message: object): string {
  return messageText(type, message);
}

function messageText(type: string, message: object): string {
  const special = wellKnownText(type, message);
  if (special !== undefined) return special;
  if (!Object.isFrozen(message)) return fieldsText(writersOf(type), message);
  const text = texts.get(message);
  if (text !== undefined) return text;
  let template = templates.get(message);
  if (template === undefined) {
    template = templateOf(writersOf(type), message);
    if (template.every((part) => !isWriter(part))) {
      const whole = render(template, message);
      texts.set(message, whole);
      return whole;
    }
    templates.set(message, template);
  }
  return render(template, message);
}

function isWriter(part: Template[number]): part is FieldWriter {
  return typeof part !== 'string' && 'json' in part;
}

function fieldsText(fields: readonly FieldWriter[], message: object): string {
  let out = '{';
  let first = true;
  for (const field of fields) {
    const text = field.text(read(message, field.json));
    if (text === undefined) continue;
    out += first ? text : `,${text}`;
    first = false;
  }
  return `${out}}`;
}

function render(template: Template, message: object): string {
  let out = '{';
  let first = true;
  for (const part of template) {
    let text: string | undefined;
    if (typeof part === 'string') text = part;
    else if (isWriter(part)) text = part.text(read(message, part.json));
    else text = part.key + part.text;
    if (text === undefined) continue;
    out += first ? text : `,${text}`;
    first = false;
  }
  return `${out}}`;
}

/** The fields of a frozen message that never change written once; the others left to each read. */
function templateOf(fields: readonly FieldWriter[], message: object): Template {
  const template: (string | Spliced | FieldWriter)[] = [];
  let run: string[] = [];
  const part = (next: Spliced | FieldWriter): void => {
    if (run.length > 0) template.push(run.join(','));
    run = [];
    template.push(next);
  };
  for (const field of fields) {
    if (!isFixed(field, message)) {
      part(field);
      continue;
    }
    const value = read(message, field.json);
    const kept = field.kind === 'message' && !field.repeated ? keptText(field.type, value) : undefined;
    if (kept !== undefined) {
      part({ key: field.key, text: kept });
      continue;
    }
    const text = field.text(value);
    if (text !== undefined) run.push(text);
  }
  if (run.length > 0) template.push(run.join(','));
  return template;
}

/** The text kept with a frozen message of `type` that has nothing written per read. */
function keptText(type: string | undefined, value: unknown): string | undefined {
  if (type === undefined || isWellKnown(type) || typeof value !== 'object' || value === null)
    return undefined;
  if (!Object.isFrozen(value)) return undefined;
  messageText(type, value);
  return texts.get(value);
}

/** Whether a field of a frozen message reads the same every time: a plain value that cannot change. */
function isFixed(field: FieldWriter, message: object): boolean {
  const descriptor = Object.getOwnPropertyDescriptor(message, field.json);
  if (descriptor === undefined) return true;
  if (descriptor.get !== undefined || descriptor.set !== undefined) return false;
  const value: unknown = descriptor.value;
  if (typeof value !== 'object' || value === null) return true;
  if (field.kind === 'message' && !field.repeated) return isFixedMessage(field.type, value);
  // A list or a map: fixed when it cannot change, and neither can the messages in it.
  if (!Object.isFrozen(value)) return false;
  if (!field.nested) return true;
  return Object.values(value).every((v) => isFixedMessage(field.type, v));
}

/** Whether a message nested in a frozen one is frozen too, with nothing in it written per read. */
function isFixedMessage(type: string | undefined, value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true;
  if (value instanceof Date || ArrayBuffer.isView(value)) return true;
  if (!Object.isFrozen(value)) return false;
  if (type === undefined || isWellKnown(type)) return true;
  return keptText(type, value) !== undefined;
}

/** A field read as the message holds it (getters run). */
function read(message: object, field: string): unknown {
  return (message as Record<string, unknown>)[field];
}

function isWellKnown(type: string): boolean {
  return type === DURATION || type === TIMESTAMP || type === FIELD_MASK || type === HTTP_BODY;
}

function wellKnownText(type: string, value: object): string | undefined {
  if (type === DURATION) return JSON.stringify(durationToJson(value as { seconds: string; nanos: number }));
  if (type === TIMESTAMP) return JSON.stringify(timestampToJson(value as Date));
  if (type === FIELD_MASK) return JSON.stringify((value as string[]).join(','));
  if (type === HTTP_BODY) {
    const body = value as { contentType: string; data: Uint8Array };
    return JSON.stringify({
      contentType: body.contentType,
      data: Buffer.from(body.data).toString('base64'),
      extensions: [],
    });
  }
  return undefined;
}

function writersOf(type: string): readonly FieldWriter[] {
  let fields = writers.get(type);
  if (fields === undefined) {
    const rows = MESSAGES[type];
    if (rows === undefined) throw new TypeError(`Unknown message type ${type}`);
    fields = rows.map(fieldWriter);
    writers.set(type, fields);
  }
  return fields;
}

function fieldWriter(field: FieldRow): FieldWriter {
  const key = `${JSON.stringify(field.json)}:`;
  const zero = zeroText(field);
  const value = fieldValueText(field);
  return {
    json: field.json,
    key,
    kind: field.kind,
    type: field.type,
    repeated: field.repeated === true,
    nested: field.kind === 'message' || (field.kind === 'map' && field.value === 'message'),
    text: (v) => {
      if (v === undefined || v === null) return zero === undefined ? undefined : key + zero;
      const text = value(v);
      return text === undefined ? undefined : key + text;
    },
  };
}

/** What an unset field writes: zero values for plain scalars, lists and maps; nothing otherwise. */
function zeroText(field: FieldRow): string | undefined {
  if (field.repeated) return '[]';
  if (field.kind === 'map') return '{}';
  if (field.optional || field.kind === 'message') return undefined;
  const zeros: Partial<Record<FieldRow['kind'], string>> = {
    string: '""',
    bool: 'false',
    int32: '0',
    double: '0',
    int64: '"0"',
    bytes: '""',
  };
  return field.kind === 'enum' ? enumText(field.type)(0) : zeros[field.kind];
}

function fieldValueText(field: FieldRow): ValueText {
  if (field.repeated) {
    const item = valueText(field.kind, field.type);
    return (v) => `[${(v as unknown[]).map((x) => item(x) ?? 'null').join(',')}]`;
  }
  if (field.kind === 'map') {
    const item = valueText(field.value ?? 'string', field.type);
    return (v) => {
      const entries: string[] = [];
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        const text = item(x);
        if (text !== undefined) entries.push(`${JSON.stringify(k)}:${text}`);
      }
      return `{${entries.join(',')}}`;
    };
  }
  return valueText(field.kind, field.type);
}

function valueText(kind: FieldRow['kind'], type: string | undefined): ValueText {
  switch (kind) {
    case 'message':
      return (v) => messageText(type ?? '', v as object);
    case 'bytes':
      return (v) => JSON.stringify(Buffer.from(v as Uint8Array).toString('base64'));
    case 'enum':
      return enumText(type);
    case 'double':
      return (v) => JSON.stringify(Number.isFinite(v) ? v : String(v));
    default:
      return (v) => JSON.stringify(v);
  }
}

/** An enum value by its name, or its number when it has none (as canonical.ts writes it). */
function enumText(type: string | undefined): ValueText {
  const names = new Map<unknown, string>();
  for (const [name, number] of ENUMS[type ?? ''] ?? []) {
    if (!names.has(number)) names.set(number, JSON.stringify(name));
  }
  return (v) => names.get(v) ?? JSON.stringify(v);
}
