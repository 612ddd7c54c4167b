/**
 * The OpenAPI document made readable as a reference (the docs site's api/ page):
 *
 * - each operation's `summary` is a short title made from its RPC name ("Create a DAI engine
 *   profile"); the proto comment's first paragraph, which protoc-gen-openapiv2 put there (a
 *   whole sentence with the permission it requires), opens the `description` instead;
 * - each service gets a human name (`x-displayName`, which Redoc shows): "DAI engine profiles";
 * - operations come in the usual order: create, get, list, update, delete, then the others.
 *
 * Pure: operation ids, paths and schemas are unchanged, so clients and the gateway's routes are
 * not affected.
 */
import type { Operation, SwaggerDocument } from './openapi.ts';

/** Titles of the calls whose names do not read as "<verb> <resource>". */
const TITLES: Readonly<Record<string, string>> = {
  AccessNotebookEngine: "Get a notebook engine's access address",
  CalculateH2OEngineSizeCompressedDataset: 'Recommend an H2O engine size for a compressed dataset',
  CalculateH2OEngineSizeRawDataset: 'Recommend an H2O engine size for a raw dataset',
  DownloadFile: 'Copy a file from H2O Drive into a sandbox engine',
  DownloadLogs: "Download an engine's logs",
  GetDAILicenseMetadata: 'Get the metadata of the DAI license',
  ListDirectory: 'List a directory of a sandbox engine',
  MakeDirectory: 'Make a directory in a sandbox engine',
  Move: 'Move a file or directory of a sandbox engine',
  ReadFile: 'Read a file of a sandbox engine',
  ReadMetrics: "Read a sandbox engine's resource usage",
  ReadOutput: "Read a process's output",
  ReadOutputFrames: "Read a process's output chunk by chunk",
  Remove: 'Remove a file or directory of a sandbox engine',
  RevealSecretToFile: 'Write a secret of H2O Secure Store into a file',
  SendSignal: 'Send a signal to a process',
  StatFile: 'Describe a file of a sandbox engine',
  StreamOutput: "Stream a process's output",
  UploadFile: 'Copy a file from a sandbox engine into H2O Drive',
  WaitProcess: 'Wait for a process to end',
  WriteFile: 'Write a file of a sandbox engine',
  ListEngines: 'List engines of every kind',
  MigrateCreator: 'Hand a DAI engine to another user',
  ResizeStorage: "Resize a DAI engine's storage",
  ResizeNotebookEngineStorage: "Resize a notebook engine's storage",
  UpgradeDAIEngineVersion: "Upgrade a DAI engine's version",
};

/** Verbs whose object is one resource, named with an article. */
const SINGLE = new Set([
  'Create',
  'Get',
  'Update',
  'Delete',
  'Copy',
  'Pause',
  'Resume',
  'Terminate',
  'Start',
]);

/** Services whose name does not read as "<resource>Service". */
const SERVICE_TITLES: Readonly<Record<string, string>> = {
  EngineService: 'Engines of every kind',
  DAILicenseService: 'DAI license',
  FilesystemService: 'Files of sandbox engines',
  H2ODriveService: 'H2O Drive transfers of sandbox engines',
  H2OSecureStoreService: 'H2O Secure Store secrets of sandbox engines',
  MetricsService: 'Resource usage of sandbox engines',
  ProcessService: 'Processes of sandbox engines',
  PortService: 'Ports of sandbox engines',
};

/** Where each verb's calls come in a service's list; the rest follow in their own order. */
const ORDER = ['Create', 'Get', 'List', 'Update', 'Delete'];

/** The words of an RPC name, keeping DAI and H2O whole. */
function words(rpc: string): string[] {
  return rpc.match(/DAI|H2O|[A-Z][a-z]*/g) ?? [rpc];
}

/** A word as it reads inside a sentence: acronyms as they are, other words in lower case. */
const lower = (word: string): string => (/^(DAI|H2O)$/.test(word) ? word : word.toLowerCase());

/** "a" or "an" before a word (H2O is read "aitch-two-oh"). */
const article = (word: string): string => (/^([aeiou]|H2O)/i.test(word) ? 'an' : 'a');

/** A short title of the RPC, e.g. `CreateDAIEngineProfile` → "Create a DAI engine profile". */
export function titleOf(rpc: string): string {
  const known = TITLES[rpc];
  if (known !== undefined) return known;
  const [verb = '', ...rest] = words(rpc);
  if (verb === 'List' && rest[0] === 'Assigned')
    return `List the ${rest.slice(1).map(lower).join(' ')} assigned to the caller`;
  const object = rest.map(lower).join(' ');
  if (SINGLE.has(verb)) return `${verb} ${article(object)} ${object}`;
  return `${verb} ${object}`;
}

/** The service's resources in words, e.g. `DAIEngineProfileService` → "DAI engine profiles". */
export function serviceTitle(service: string): string {
  const known = SERVICE_TITLES[service];
  if (known !== undefined) return known;
  const [first = '', ...rest] = words(service.replace(/Service$/, ''));
  return `${[first, ...rest.map(lower)].join(' ')}s`;
}

const rpcOf = (operation: Operation): string => (operation.operationId ?? '').replace(/^[A-Za-z0-9]+_/, '');

/** Where an operation comes in its service: by its verb's place in {@link ORDER}. */
function rank(operation: Operation): number {
  const [verb = ''] = words(rpcOf(operation));
  const place = ORDER.indexOf(verb);
  return place < 0 ? ORDER.length : place;
}

function retitled(operation: Operation): Operation {
  const sentence = typeof operation['summary'] === 'string' ? operation['summary'] : '';
  const details = typeof operation['description'] === 'string' ? operation['description'] : '';
  const description = [sentence, details].filter((text) => text !== '').join('\n\n');
  return { ...operation, summary: titleOf(rpcOf(operation)), ...(description ? { description } : {}) };
}

/** The document with readable titles, service names and order (see the module comment). */
export function readable(document: SwaggerDocument): SwaggerDocument {
  const paths = Object.entries(document.paths).map(([path, methods], index) => {
    const operations = Object.entries(methods)
      .map(([method, operation]) => [method, retitled(operation)] as const)
      .sort(([, a], [, b]) => rank(a) - rank(b));
    const first = Math.min(...operations.map(([, operation]) => rank(operation)));
    return { path, index, first, methods: Object.fromEntries(operations) };
  });
  paths.sort((a, b) => a.first - b.first || a.index - b.index);
  const tags = Array.isArray(document['tags'])
    ? (document['tags'] as { name: string }[]).map((tag) => ({
        ...tag,
        'x-displayName': serviceTitle(tag.name),
      }))
    : undefined;
  return {
    ...document,
    ...(tags ? { tags } : {}),
    paths: Object.fromEntries(paths.map(({ path, methods }) => [path, methods])),
  };
}
