import type { Api, Message, Method } from './descriptor.ts';
import { loadApi } from './load-api.ts';

const RESOURCE_ID = /^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/;
let api: Api;

beforeAll(() => {
  api = loadApi();
}, 60_000);

function message(name: string): Message {
  const found = api.messages.get(name);
  if (found === undefined) throw new Error(`No message ${name}`);
  return found;
}

function fieldNames(name: string): string[] {
  return message(name).fields.map((f) => f.name);
}

function methods(prefix: string): Method[] {
  return api.services.flatMap((s) => s.methods).filter((m) => m.name.startsWith(prefix));
}

/** Messages of the API itself: not map entries. */
function apiMessages(): Message[] {
  return [...api.messages.values()].filter((m) => !m.mapEntry);
}

describe('the proto API', () => {
  test('has the twenty services', () => {
    expect(api.services.map((s) => s.fullName.split('.').pop()).sort()).toEqual([
      'DAIEngineProfileService',
      'DAIEngineService',
      'DAIEngineVersionService',
      'DAILicenseService',
      'EngineService',
      'FilesystemService',
      'H2ODriveService',
      'H2OEngineProfileService',
      'H2OEngineService',
      'H2OEngineVersionService',
      'H2OSecureStoreService',
      'MetricsService',
      'NotebookEngineImageService',
      'NotebookEngineProfileService',
      'NotebookEngineService',
      'PortService',
      'ProcessService',
      'SandboxEngineImageService',
      'SandboxEngineService',
      'SandboxEngineTemplateService',
    ]);
  });

  /** `rpc: field` for every required field that a message of each RPC lacks. */
  function missing(rpcs: Method[], side: 'inputType' | 'outputType', required: string[]): string[] {
    return rpcs.flatMap((m) =>
      required.filter((f) => !fieldNames(m[side]).includes(f)).map((f) => `${m.name}: ${f}`),
    );
  }

  test('every List RPC pages with page_size and page_token and answers next_page_token', () => {
    // ListDirectory is a filesystem call, not a standard List of resources: a directory comes
    // whole, as clients expect.
    const lists = methods('List').filter((m) => m.name !== 'ListDirectory');
    expect(lists.length).toBeGreaterThanOrEqual(10);
    expect(missing(lists, 'inputType', ['page_size', 'page_token'])).toEqual([]);
    expect(missing(lists, 'outputType', ['next_page_token'])).toEqual([]);
  });

  test('every Update RPC takes an update_mask and is a PATCH of the resource', () => {
    const updates = methods('Update');
    expect(updates.length).toBeGreaterThanOrEqual(8);
    expect(missing(updates, 'inputType', ['update_mask'])).toEqual([]);
    expect(updates.filter((m) => m.bindings[0]?.method !== 'PATCH').map((m) => m.name)).toEqual([]);
  });

  test('only server streaming: REST binds no client-streaming RPC', () => {
    const streaming = api.services.flatMap((s) => s.methods).filter((m) => m.serverStreaming);
    expect(streaming.map((m) => m.name)).toEqual(['StreamOutput']);
    expect(api.services.flatMap((s) => s.methods).filter((m) => m.clientStreaming)).toEqual([]);
  });

  test('every RPC has an HTTP binding under /v1/ and a comment', () => {
    for (const m of api.services.flatMap((s) => s.methods)) {
      expect({ rpc: m.name, bindings: m.bindings.length }).toEqual({ rpc: m.name, bindings: 1 });
      expect(m.bindings[0]?.path).toMatch(/^\/v1\//);
      expect({ rpc: m.name, comment: m.comment.length > 0 }).toEqual({ rpc: m.name, comment: true });
    }
  });

  /**
   * Custom methods that only read, bound to GET as their clients call them: a notebook's address,
   * assigned profiles, a process's output, a sandbox engine's files and metrics.
   */
  const READ_ONLY_VERBS = new Set([
    'access',
    'listAssigned',
    'readOutput',
    'readOutputFrames',
    'streamOutput',
    'readFile',
    'listDirectory',
    'statFile',
    'read',
  ]);

  test('every custom method is a POST with body "*", except the read-only ones, which are GETs', () => {
    for (const m of api.services.flatMap((s) => s.methods)) {
      const binding = m.bindings[0];
      const verb = /:([A-Za-z0-9]+)$/.exec(binding?.path ?? '')?.[1];
      if (verb === undefined) continue;
      if (READ_ONLY_VERBS.has(verb)) {
        expect({ rpc: m.name, method: binding?.method }).toEqual({ rpc: m.name, method: 'GET' });
      } else {
        expect({ rpc: m.name, method: binding?.method, body: binding?.body }).toEqual({
          rpc: m.name,
          method: 'POST',
          body: '*',
        });
      }
    }
  });

  test('every resource declares its name pattern and a collection id that is a valid resource id', () => {
    const resources = apiMessages().filter((m) => m.resource !== undefined);
    expect(resources.length).toBeGreaterThanOrEqual(14);
    for (const m of resources) {
      const pattern = m.resource?.pattern?.[0] ?? '';
      // In a workspace, or (processes and ports) below a resource of a workspace.
      expect(pattern).toMatch(/^workspaces\/\{workspace\}(\/[a-z][a-zA-Z0-9]+\/\{[a-z][a-z0-9_]*\}){1,2}$/);
      const variable = /\{([a-z0-9_]+)\}$/.exec(pattern)?.[1]?.replaceAll('_', '-') ?? '';
      expect(variable).toMatch(RESOURCE_ID);
      expect(fieldNames(m.fullName)).toContain('name');
    }
  });

  test('every field of a resource states its behaviour, and every message and field is documented', () => {
    const undocumented: string[] = [];
    const noBehaviour: string[] = [];
    for (const m of apiMessages()) {
      if (m.comment === '') undocumented.push(m.fullName);
      for (const f of m.fields) {
        if (f.comment === '') undocumented.push(`${m.fullName}.${f.name}`);
        if (m.resource !== undefined && f.behaviors.length === 0) noBehaviour.push(`${m.fullName}.${f.name}`);
      }
    }
    expect(undocumented).toEqual([]);
    expect(noBehaviour).toEqual([]);
  });
});
