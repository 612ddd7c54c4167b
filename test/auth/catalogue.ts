/**
 * What an administrator defines before users create engines: a profile of each kind, DAI and
 * H2O versions and a notebook image, in one workspace.
 */
import type { ApiServer } from '../helpers/api-server.ts';
import type { Message } from './calls.ts';

export const GIB = 1024 ** 3;

const numeric = (min: string, def: string, max: string | null = null): Message => ({
  min,
  default: def,
  max,
  cumulativeMax: null,
});

/** A profile of any kind (each kind ignores the constraints it does not have). */
export function profile(fields: Message = {}): Message {
  return {
    displayName: 'Standard',
    priority: 1,
    enabled: true,
    assignedOidcRolesEnabled: false,
    assignedOidcRoles: [],
    maxRunningEngines: null,
    cpuConstraint: numeric('1', '1', '8'),
    gpuConstraint: numeric('0', '0', '2'),
    memoryBytesConstraint: numeric(String(GIB), String(4 * GIB), String(64 * GIB)),
    storageBytesConstraint: numeric(String(GIB), String(10 * GIB), String(100 * GIB)),
    nodeCountConstraint: numeric('1', '1', '4'),
    maxIdleDurationConstraint: { min: '0s', default: '3600s', max: null },
    maxRunningDurationConstraint: { min: '0s', default: '14400s', max: null },
    ...fields,
  };
}

/** Whatever answers REST calls: the test's gateway, or a replica in a process of its own. */
export type RestCaller = Pick<ApiServer, 'rest'>;

/** Calls that must succeed; the body of the answer. */
export async function ok(
  api: RestCaller,
  call: { method: string; path: string; body?: unknown; headers: Record<string, string> },
): Promise<Record<string, unknown>> {
  const response = await api.rest(call.method, call.path, call.body, call.headers);
  if (response.status !== 200)
    throw new Error(`${call.method} ${call.path}: ${response.status} ${JSON.stringify(response.json)}`);
  return response.json;
}

/**
 * Defines, in `workspace`, the profiles `standard` of each kind (open to every role), DAI versions
 * 1.10.6 and 1.11.0, H2O version 3.46.0.1 and the notebook image `jupyter`.
 */
export async function defineCatalogue(
  api: RestCaller,
  { workspace, headers }: { workspace: string; headers: Record<string, string> },
): Promise<void> {
  const post = (collection: string, id: string, body: Message): Promise<Record<string, unknown>> =>
    ok(api, {
      method: 'POST',
      path: `/v1/workspaces/${workspace}/${collection}?${collection.replace(/s$/, '')}Id=${id}`,
      body,
      headers,
    });
  for (const collection of ['daiEngineProfiles', 'h2oEngineProfiles', 'notebookEngineProfiles'])
    await post(collection, 'standard', profile());
  await post('daiEngineVersions', '1.10.6', { image: 'dai:1.10.6' });
  await post('daiEngineVersions', '1.11.0', { image: 'dai:1.11.0' });
  await post('h2oEngineVersions', '3.46.0.1', { image: 'h2o:3.46.0.1' });
  await post('notebookEngineImages', 'jupyter', { image: 'jupyter:1', enabled: true });
}

/** The bodies of engines of each kind on the catalogue of `workspace`. */
export function engineBodies(workspace: string): { dai: Message; h2o: Message; notebook: Message } {
  const ws = `workspaces/${workspace}`;
  return {
    dai: { profile: `${ws}/daiEngineProfiles/standard`, daiEngineVersion: `${ws}/daiEngineVersions/1.10.6` },
    h2o: {
      profile: `${ws}/h2oEngineProfiles/standard`,
      h2oEngineVersion: `${ws}/h2oEngineVersions/3.46.0.1`,
    },
    notebook: {
      profile: `${ws}/notebookEngineProfiles/standard`,
      notebookImage: `${ws}/notebookEngineImages/jupyter`,
    },
  };
}
