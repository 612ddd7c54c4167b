/**
 * A typed view of the API as `buf build --as-file-descriptor-set -o image.json` describes it:
 * messages, fields, enums, services and their http bindings, field behaviours and comments.
 * The generators (routes, CRDs) and the proto conventions test read the API only through here.
 */

/** The subset of a protobuf FileDescriptorSet, in its canonical JSON form, that we read. */
export interface FileDescriptorSetJson {
  file: FileJson[];
}

interface FileJson {
  name: string;
  package?: string;
  messageType?: MessageJson[];
  enumType?: EnumJson[];
  service?: ServiceJson[];
  sourceCodeInfo?: { location?: { path?: number[]; leadingComments?: string }[] };
}

interface MessageJson {
  name: string;
  field?: FieldJson[];
  nestedType?: MessageJson[];
  enumType?: EnumJson[];
  oneofDecl?: { name: string }[];
  options?: { mapEntry?: boolean; '[google.api.resource]'?: ResourceOption };
}

interface FieldJson {
  name: string;
  number: number;
  label?: 'LABEL_OPTIONAL' | 'LABEL_REPEATED' | 'LABEL_REQUIRED';
  type: string;
  typeName?: string;
  jsonName?: string;
  proto3Optional?: boolean;
  oneofIndex?: number;
  options?: { '[google.api.field_behavior]'?: string[] };
}

interface EnumJson {
  name: string;
  value?: { name: string; number: number }[];
}

interface ServiceJson {
  name: string;
  method?: MethodJson[];
}

interface MethodJson {
  name: string;
  inputType: string;
  outputType: string;
  clientStreaming?: boolean;
  serverStreaming?: boolean;
  options?: { '[google.api.http]'?: HttpRuleJson };
}

/** google.api.HttpRule in JSON form. */
export interface HttpRuleJson {
  get?: string;
  post?: string;
  patch?: string;
  put?: string;
  delete?: string;
  body?: string;
  responseBody?: string;
  additionalBindings?: HttpRuleJson[];
}

/** google.api.ResourceDescriptor in JSON form. */
export interface ResourceOption {
  type?: string;
  pattern?: string[];
  plural?: string;
  singular?: string;
}

/** A field of a message, with what the generators need to know about it. */
export interface Field {
  name: string;
  jsonName: string;
  number: number;
  /** The protobuf scalar type (`TYPE_INT64`, …), or `TYPE_MESSAGE` / `TYPE_ENUM`. */
  type: string;
  /** The full name of the message or enum type, without the leading dot. */
  typeName: string | undefined;
  repeated: boolean;
  /** Declared with proto3 `optional`: presence is tracked, so "unset" differs from zero. */
  optional: boolean;
  behaviors: string[];
  comment: string;
}

/** A message type. */
export interface Message {
  fullName: string;
  fields: Field[];
  comment: string;
  /** Set for map entry messages (`map<K, V>` fields). */
  mapEntry: boolean;
  resource: ResourceOption | undefined;
}

/** An enum type. */
export interface Enum {
  fullName: string;
  values: { name: string; number: number; comment: string }[];
  comment: string;
}

/** One HTTP binding of an RPC. */
export interface HttpBinding {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  path: string;
  body: string;
}

/** An RPC with its HTTP bindings. */
export interface Method {
  service: string;
  name: string;
  inputType: string;
  outputType: string;
  /** The RPC answers with a stream of response messages (`returns (stream …)`). */
  serverStreaming: boolean;
  /** The RPC takes a stream of request messages; REST cannot bind such an RPC. */
  clientStreaming: boolean;
  bindings: HttpBinding[];
  comment: string;
}

/** A service. */
export interface Service {
  fullName: string;
  methods: Method[];
  comment: string;
}

/** The whole API, indexed by full names. */
export interface Api {
  messages: Map<string, Message>;
  enums: Map<string, Enum>;
  services: Service[];
}

// Field numbers of FileDescriptorProto / DescriptorProto / ServiceDescriptorProto used in
// SourceCodeInfo paths.
const FILE_MESSAGE = 4;
const FILE_ENUM = 5;
const FILE_SERVICE = 6;
const MESSAGE_FIELD = 2;
const MESSAGE_NESTED = 3;
const MESSAGE_ENUM = 4;
const ENUM_VALUE = 2;
const SERVICE_METHOD = 2;

/** Reads the API of the files whose package starts with `packagePrefix` (dependencies are skipped). */
export function readApi(set: FileDescriptorSetJson, packagePrefix: string): Api {
  const api: Api = { messages: new Map(), enums: new Map(), services: [] };
  for (const file of set.file) {
    if (!(file.package ?? '').startsWith(packagePrefix)) continue;
    const comments = commentIndex(file);
    const prefix = file.package ?? '';
    const context = { api, comments };
    file.messageType?.forEach((m, i) => {
      addMessage(context, m, prefix, [FILE_MESSAGE, i]);
    });
    file.enumType?.forEach((e, i) => {
      addEnum(context, e, prefix, [FILE_ENUM, i]);
    });
    file.service?.forEach((s, i) => {
      api.services.push(readService(s, prefix, [FILE_SERVICE, i], comments));
    });
  }
  return api;
}

type Comments = Map<string, string>;

/** Where definitions go, and the comments of the file being read. */
interface Context {
  api: Api;
  comments: Comments;
}

function commentIndex(file: FileJson): Comments {
  const index: Comments = new Map();
  for (const location of file.sourceCodeInfo?.location ?? []) {
    if (location.path && location.leadingComments) {
      index.set(location.path.join('.'), cleanComment(location.leadingComments));
    }
  }
  return index;
}

/** Joins a comment's lines, dropping the one leading space protoc keeps after `//`. */
function cleanComment(text: string): string {
  return text
    .split('\n')
    .map((line) => (line.startsWith(' ') ? line.slice(1) : line))
    .join('\n')
    .trim();
}

function addMessage({ api, comments }: Context, m: MessageJson, prefix: string, path: number[]): void {
  const fullName = `${prefix}.${m.name}`;
  const fields = (m.field ?? []).map((f, i) =>
    readField(f, comments.get([...path, MESSAGE_FIELD, i].join('.'))),
  );
  api.messages.set(fullName, {
    fullName,
    fields,
    comment: comments.get(path.join('.')) ?? '',
    mapEntry: m.options?.mapEntry === true,
    resource: m.options?.['[google.api.resource]'],
  });
  m.nestedType?.forEach((n, i) => {
    addMessage({ api, comments }, n, fullName, [...path, MESSAGE_NESTED, i]);
  });
  m.enumType?.forEach((e, i) => {
    addEnum({ api, comments }, e, fullName, [...path, MESSAGE_ENUM, i]);
  });
}

function readField(f: FieldJson, comment: string | undefined): Field {
  return {
    name: f.name,
    jsonName: f.jsonName ?? f.name,
    number: f.number,
    type: f.type,
    typeName: f.typeName?.replace(/^\./, ''),
    repeated: f.label === 'LABEL_REPEATED',
    optional: f.proto3Optional === true,
    behaviors: f.options?.['[google.api.field_behavior]'] ?? [],
    comment: comment ?? '',
  };
}

function addEnum({ api, comments }: Context, e: EnumJson, prefix: string, path: number[]): void {
  const fullName = `${prefix}.${e.name}`;
  api.enums.set(fullName, {
    fullName,
    comment: comments.get(path.join('.')) ?? '',
    values: (e.value ?? []).map((v, i) => ({
      name: v.name,
      number: v.number,
      comment: comments.get([...path, ENUM_VALUE, i].join('.')) ?? '',
    })),
  });
}

function readService(s: ServiceJson, prefix: string, path: number[], comments: Comments): Service {
  const fullName = `${prefix}.${s.name}`;
  return {
    fullName,
    comment: comments.get(path.join('.')) ?? '',
    methods: (s.method ?? []).map((m, i) => ({
      service: fullName,
      name: m.name,
      inputType: m.inputType.replace(/^\./, ''),
      outputType: m.outputType.replace(/^\./, ''),
      serverStreaming: m.serverStreaming === true,
      clientStreaming: m.clientStreaming === true,
      bindings: httpBindings(m.options?.['[google.api.http]']),
      comment: comments.get([...path, SERVICE_METHOD, i].join('.')) ?? '',
    })),
  };
}

/** The bindings of an HttpRule, the primary one first, then its additional bindings. */
export function httpBindings(rule: HttpRuleJson | undefined): HttpBinding[] {
  if (rule === undefined) return [];
  const verbs = ['get', 'post', 'patch', 'put', 'delete'] as const;
  const primary = verbs.flatMap((verb) => {
    const path = rule[verb];
    return path === undefined
      ? []
      : [{ method: verb.toUpperCase() as HttpBinding['method'], path, body: rule.body ?? '' }];
  });
  return [...primary, ...(rule.additionalBindings ?? []).flatMap(httpBindings)];
}
