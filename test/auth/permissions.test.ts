/**
 * Every RPC, over REST and gRPC, for five callers: no token, a bad token, a user without the
 * call's permission, a user with exactly that permission (acting on its own engines), and an
 * administrator. Tokens are real: signed by the embedded OpenID provider and verified by the
 * gateway against its published keys. The policy gives each permission its own role, so a user
 * can hold every permission but the one a call needs.
 */
import { Metadata } from '@grpc/grpc-js';
import { ADMINISTER, PERMISSION_PREFIX } from '../../gateway/src/auth/authorizer.ts';
import { PERMISSIONS } from '../../gateway/src/auth/permissions.ts';
import { Code, HTTP_STATUS } from '../../gateway/src/errors/code.ts';
import { useApiServer } from '../helpers/api-server.ts';
import { bearer, useIdentity } from '../helpers/use-identity.ts';
import { generateSigningKey } from '../identity/provider.ts';
import { SignJWT, importJWK } from 'jose';
import { overGrpc, overRest, RPCS, type Message, type Outcome } from './calls.ts';
import { defineCatalogue, engineBodies, GIB, ok, profile } from './catalogue.ts';

const W = 'perm';
const WS = `workspaces/${W}`;
const short = (permission: string): string => permission.slice(PERMISSION_PREFIX.length);
// One role per permission (named like the permission without its prefix); administrators hold all.
const POLICY = [
  'grants:',
  '  - roles: [admin]',
  "    workspaces: ['*']",
  "    permissions: ['actions/enginemanager/*']",
  ...PERMISSIONS.filter((p) => p !== ADMINISTER).flatMap((p) => [
    `  - roles: ['${short(p)}']`,
    "    workspaces: ['*']",
    `    permissions: ['${p}']`,
  ]),
].join('\n');
const EVERY_ROLE = PERMISSIONS.filter((p) => p !== ADMINISTER).map(short);

const { identity, authenticate, authorizer } = useIdentity({
  accounts: [
    { id: 'admin', name: 'Ada Admin', roles: ['admin'] },
    { id: 'member', name: 'Max Member', roles: EVERY_ROLE },
  ],
  policy: POLICY,
});
const api = useApiServer({ namespace: 'permissions-test', authenticate, authorizer });

let tokenQueue: Promise<unknown> = Promise.resolve();
const memberTokens = new Map<string, Promise<string>>();
/** A token of `users/member` holding exactly `roles` (tokens carry the roles of their issue). */
function memberToken(roles: readonly string[]): Promise<string> {
  const key = [...roles].sort().join(' ');
  let token = memberTokens.get(key);
  if (token === undefined) {
    const { provider } = identity();
    const issue = async (): Promise<string> => {
      provider.addAccount({ id: 'member', name: 'Max Member', roles });
      return provider.accessToken('member');
    };
    token = tokenQueue.then(issue, issue);
    tokenQueue = token;
    memberTokens.set(key, token);
  }
  return token;
}

let counter = 0;
const fresh = (prefix: string): string => `${prefix}-${++counter}`;

async function post(collection: string, id: string, body: Message, as: 'admin' | 'member'): Promise<string> {
  const headers =
    as === 'admin' ? await identity().headers('admin') : bearer(await memberToken(EVERY_ROLE)).headers;
  const field = collection.replace(/s$/, '');
  const created = await ok(api(), {
    method: 'POST',
    path: `/v1/${WS}/${collection}?${field}Id=${id}`,
    body,
    headers,
  });
  return (created[field] as { name: string }).name;
}

const bodies = engineBodies(W);
const daiEngine = (): Promise<string> => post('daiEngines', fresh('d'), bodies.dai, 'member');
const h2oEngine = (): Promise<string> => post('h2oEngines', fresh('h'), bodies.h2o, 'member');
const notebookEngine = (): Promise<string> => post('notebookEngines', fresh('n'), bodies.notebook, 'member');
async function paused(engine: () => Promise<string>): Promise<string> {
  const name = await engine();
  await ok(api(), {
    method: 'POST',
    path: `/v1/${encodeURIComponent(name)}:pause`,
    body: {},
    headers: await identity().headers('admin'),
  });
  return name;
}
const versionId = (): string => `2.0.${++counter}`;

/** A sandbox engine of the member's, from an image and a template defined once; no operator runs it here. */
let sandboxCatalogue: Promise<unknown> | undefined;
async function sandboxEngine(): Promise<string> {
  sandboxCatalogue ??= Promise.all([
    post('sandboxEngineImages', 'python', { image: 'python:3.12-slim', enabled: true }, 'admin'),
    post(
      'sandboxEngineTemplates',
      'small',
      { memoryBytesLimit: String(GIB), maxIdleDuration: '3600s', maxRunningDuration: '0s', enabled: true },
      'admin',
    ),
  ]);
  await sandboxCatalogue;
  const body = {
    sandboxEngineImage: `${WS}/sandboxEngineImages/python`,
    sandboxEngineTemplate: `${WS}/sandboxEngineTemplates/small`,
  };
  return post('sandboxEngines', fresh('s'), body, 'member');
}

/** The standard five RPCs of an administrator's catalogue kind. */
function catalogueRows(kind: string, body: () => Message, update: { field: string; value: string }): Row[] {
  const collection = `${kind.charAt(0).toLowerCase()}${kind.slice(1)}s`;
  const field = collection.replace(/s$/, '');
  const service = `${kind}Service`;
  const stored = (): Promise<string> => post(collection, fresh('c'), body(), 'admin');
  return [
    {
      rpc: `${service}.Create${kind}`,
      permissions: [`${collection}/CREATE`],
      request: () => Promise.resolve({ parent: WS, [`${field}Id`]: fresh('c'), [field]: body() }),
    },
    {
      rpc: `${service}.Get${kind}`,
      permissions: [`${collection}/GET`],
      request: async () => ({ name: await stored() }),
    },
    {
      rpc: `${service}.List${kind}s`,
      permissions: [`${collection}/LIST`],
      request: () => Promise.resolve({ parent: WS }),
    },
    {
      rpc: `${service}.Update${kind}`,
      permissions: [`${collection}/UPDATE`],
      request: async () => ({
        [field]: { ...body(), name: await stored(), [update.field]: update.value },
        updateMask: update.field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`),
      }),
    },
    {
      rpc: `${service}.Delete${kind}`,
      permissions: [`${collection}/DELETE`],
      request: async () => ({ name: await stored() }),
    },
  ];
}

/**
 * In-engine calls on a sandbox that is not running (no operator here): a caller allowed the call
 * learns that it is not running — or, for reads of processes, which outlive their run, that there
 * is none — never a permission error.
 */
function inEngineRows(
  action: string,
  rows: { rpc: string; request: (engine: string) => Message; outcome?: number }[],
): Row[] {
  return rows.map((row) => ({
    rpc: row.rpc,
    permissions: [`sandboxEngines/${action}`],
    request: async () => row.request(await sandboxEngine()),
    outcome: row.outcome ?? Code.FAILED_PRECONDITION,
  }));
}

const process = (engine: string): string => `${engine}/processes/p1`;

/** One RPC: the permissions it checks, and a request that a permitted caller's call carries out. */
interface Row {
  rpc: string;
  label?: string;
  /** Without the `actions/enginemanager/` prefix. */
  permissions: string[];
  /** A fresh request; called once for every call that should succeed. */
  request: () => Promise<Message>;
  /** What a caller holding exactly `permissions` gets, when it is not success. */
  permitted?: number;
  /** What every caller allowed the call gets (administrators too), when it is not success. */
  outcome?: number;
}

function profileRows(service: string, collection: string, kind: string): Row[] {
  const field = collection.replace(/s$/, '');
  const newProfile = (): Promise<string> => post(collection, fresh('p'), profile(), 'admin');
  return [
    {
      rpc: `${service}.Create${kind}`,
      permissions: [`${collection}/CREATE`],
      request: () => Promise.resolve({ parent: WS, [`${field}Id`]: fresh('p'), [field]: profile() }),
    },
    {
      rpc: `${service}.Get${kind}`,
      permissions: [`${collection}/GET`],
      request: async () => ({ name: await newProfile() }),
    },
    {
      rpc: `${service}.List${kind}s`,
      permissions: [`${collection}/LIST`],
      request: () => Promise.resolve({ parent: WS }),
    },
    {
      rpc: `${service}.ListAssigned${kind}s`,
      permissions: [`${collection}/LIST_ASSIGNED`],
      request: () => Promise.resolve({ parent: WS }),
    },
    {
      rpc: `${service}.Update${kind}`,
      permissions: [`${collection}/UPDATE`],
      request: async () => ({
        [field]: { name: await newProfile(), displayName: 'Renamed' },
        updateMask: 'display_name',
      }),
    },
    {
      rpc: `${service}.Delete${kind}`,
      permissions: [`${collection}/DELETE`],
      request: async () => ({ name: await newProfile() }),
    },
    {
      rpc: `${service}.Copy${kind}`,
      permissions: [`${collection}/GET`, `${collection}/CREATE`],
      request: () =>
        Promise.resolve({ name: `${WS}/${collection}/standard`, parent: WS, [`${field}Id`]: fresh('copy') }),
    },
  ];
}

function versionRows(service: string, collection: string, kind: string): Row[] {
  const field = collection.replace(/s$/, '');
  const newVersion = (): Promise<string> => post(collection, versionId(), { image: 'image:2' }, 'admin');
  return [
    {
      rpc: `${service}.Create${kind}`,
      permissions: [`${collection}/CREATE`],
      request: () =>
        Promise.resolve({ parent: WS, [`${field}Id`]: versionId(), [field]: { image: 'image:3' } }),
    },
    {
      rpc: `${service}.Get${kind}`,
      permissions: [`${collection}/GET`],
      request: async () => ({ name: await newVersion() }),
    },
    {
      rpc: `${service}.List${kind}s`,
      permissions: [`${collection}/LIST`],
      request: () => Promise.resolve({ parent: WS }),
    },
    {
      rpc: `${service}.Update${kind}`,
      permissions: [`${collection}/UPDATE`],
      request: async () => ({ [field]: { name: await newVersion(), image: 'image:4' }, updateMask: 'image' }),
    },
    {
      rpc: `${service}.Delete${kind}`,
      permissions: [`${collection}/DELETE`],
      request: async () => ({ name: await newVersion() }),
    },
    {
      rpc: `${service}.Assign${kind}Aliases`,
      permissions: [`${collection}/ASSIGN_ALIASES`],
      request: async () => ({ name: await newVersion(), aliases: [fresh('alias')] }),
    },
  ];
}

const LIMITS = { memoryBytesPerNodeMin: String(GIB), nodeCountMin: '1' };

const ROWS: Row[] = [
  {
    rpc: 'DAIEngineService.CreateDAIEngine',
    permissions: ['daiEngines/CREATE'],
    request: () => Promise.resolve({ parent: WS, daiEngineId: fresh('d'), daiEngine: bodies.dai }),
  },
  {
    rpc: 'DAIEngineService.GetDAIEngine',
    permissions: ['daiEngines/GET'],
    request: async () => ({ name: await daiEngine() }),
  },
  {
    rpc: 'DAIEngineService.ListDAIEngines',
    permissions: ['daiEngines/LIST'],
    request: () => Promise.resolve({ parent: WS }),
  },
  {
    rpc: 'DAIEngineService.UpdateDAIEngine',
    permissions: ['daiEngines/UPDATE'],
    request: async () => ({
      daiEngine: { name: await daiEngine(), displayName: 'Renamed' },
      updateMask: 'display_name',
    }),
  },
  {
    rpc: 'DAIEngineService.DeleteDAIEngine',
    permissions: ['daiEngines/DELETE'],
    request: async () => ({ name: await daiEngine() }),
  },
  {
    rpc: 'DAIEngineService.PauseDAIEngine',
    permissions: ['daiEngines/PAUSE'],
    request: async () => ({ name: await daiEngine() }),
  },
  {
    rpc: 'DAIEngineService.ResumeDAIEngine',
    permissions: ['daiEngines/RESUME'],
    request: async () => ({ name: await paused(daiEngine) }),
  },
  {
    rpc: 'DAIEngineService.ResizeStorage',
    permissions: ['daiEngines/RESIZE_STORAGE'],
    request: async () => ({ daiEngine: await daiEngine(), newStorageBytes: String(20 * GIB) }),
  },
  {
    rpc: 'DAIEngineService.UpgradeDAIEngineVersion',
    permissions: ['daiEngines/UPGRADE_DAI_ENGINE_VERSION'],
    request: async () => ({
      daiEngine: await paused(daiEngine),
      newDaiEngineVersion: `${WS}/daiEngineVersions/1.11.0`,
    }),
  },
  {
    rpc: 'DAIEngineService.MigrateCreator',
    permissions: ['daiEngines/MIGRATE_CREATOR'],
    request: async () => ({ daiEngine: await daiEngine(), newCreator: 'users/someone-else' }),
    // Administrators only, whatever the policy grants.
    permitted: Code.PERMISSION_DENIED,
  },
  {
    rpc: 'DAIEngineService.DownloadLogs',
    permissions: ['daiEngines/DOWNLOAD_LOGS'],
    request: async () => ({ daiEngine: await daiEngine() }),
  },
  {
    rpc: 'H2OEngineService.CreateH2OEngine',
    permissions: ['h2oEngines/CREATE'],
    request: () => Promise.resolve({ parent: WS, h2oEngineId: fresh('h'), h2oEngine: bodies.h2o }),
  },
  {
    rpc: 'H2OEngineService.GetH2OEngine',
    permissions: ['h2oEngines/GET'],
    request: async () => ({ name: await h2oEngine() }),
  },
  {
    rpc: 'H2OEngineService.ListH2OEngines',
    permissions: ['h2oEngines/LIST'],
    request: () => Promise.resolve({ parent: WS }),
  },
  {
    rpc: 'H2OEngineService.UpdateH2OEngine',
    permissions: ['h2oEngines/UPDATE'],
    request: async () => ({
      h2oEngine: { name: await h2oEngine(), displayName: 'Renamed' },
      updateMask: 'display_name',
    }),
  },
  {
    rpc: 'H2OEngineService.DeleteH2OEngine',
    permissions: ['h2oEngines/DELETE'],
    request: async () => ({ name: await h2oEngine() }),
  },
  {
    rpc: 'H2OEngineService.TerminateH2OEngine',
    permissions: ['h2oEngines/TERMINATE'],
    request: async () => ({ name: await h2oEngine() }),
  },
  {
    rpc: 'H2OEngineService.DownloadLogs',
    permissions: ['h2oEngines/DOWNLOAD_LOGS'],
    request: async () => ({ h2oEngine: await h2oEngine() }),
  },
  {
    rpc: 'H2OEngineService.CalculateH2OEngineSizeCompressedDataset',
    // Advice without a workspace: any signed-in caller.
    permissions: [],
    request: () => Promise.resolve({ rowsCount: '1000000', columnsCount: '100', limits: LIMITS }),
  },
  {
    rpc: 'H2OEngineService.CalculateH2OEngineSizeRawDataset',
    permissions: [],
    request: () => Promise.resolve({ datasetSizeBytes: String(GIB), limits: LIMITS }),
  },
  {
    rpc: 'NotebookEngineService.CreateNotebookEngine',
    permissions: ['notebookEngines/CREATE'],
    request: () =>
      Promise.resolve({ parent: WS, notebookEngineId: fresh('n'), notebookEngine: bodies.notebook }),
  },
  {
    rpc: 'NotebookEngineService.GetNotebookEngine',
    permissions: ['notebookEngines/GET'],
    request: async () => ({ name: await notebookEngine() }),
  },
  {
    rpc: 'NotebookEngineService.ListNotebookEngines',
    permissions: ['notebookEngines/LIST'],
    request: () => Promise.resolve({ parent: WS }),
  },
  {
    rpc: 'NotebookEngineService.UpdateNotebookEngine',
    permissions: ['notebookEngines/UPDATE'],
    request: async () => ({
      notebookEngine: { name: await notebookEngine(), displayName: 'Renamed' },
      updateMask: 'display_name',
    }),
  },
  {
    rpc: 'NotebookEngineService.DeleteNotebookEngine',
    permissions: ['notebookEngines/DELETE'],
    request: async () => ({ name: await notebookEngine() }),
  },
  {
    rpc: 'NotebookEngineService.PauseNotebookEngine',
    permissions: ['notebookEngines/PAUSE'],
    request: async () => ({ name: await notebookEngine() }),
  },
  {
    rpc: 'NotebookEngineService.ResumeNotebookEngine',
    permissions: ['notebookEngines/RESUME'],
    request: async () => ({ name: await paused(notebookEngine) }),
  },
  {
    rpc: 'NotebookEngineService.ResizeNotebookEngineStorage',
    permissions: ['notebookEngines/RESIZE_STORAGE'],
    request: async () => ({ name: await notebookEngine(), newStorageBytes: String(20 * GIB) }),
  },
  {
    rpc: 'NotebookEngineService.AccessNotebookEngine',
    permissions: ['notebookEngines/ACCESS'],
    request: async () => ({ notebookEngine: await notebookEngine() }),
  },
  {
    rpc: 'EngineService.ListEngines',
    permissions: ['engines/LIST'],
    request: () => Promise.resolve({ parent: WS }),
  },
  {
    rpc: 'EngineService.ListEngines',
    label: 'of all workspaces',
    permissions: ['engines/LIST_ALL'],
    request: () => Promise.resolve({ parent: 'workspaces/-' }),
  },
  ...profileRows('DAIEngineProfileService', 'daiEngineProfiles', 'DAIEngineProfile'),
  ...profileRows('H2OEngineProfileService', 'h2oEngineProfiles', 'H2OEngineProfile'),
  ...profileRows('NotebookEngineProfileService', 'notebookEngineProfiles', 'NotebookEngineProfile'),
  ...versionRows('DAIEngineVersionService', 'daiEngineVersions', 'DAIEngineVersion'),
  ...versionRows('H2OEngineVersionService', 'h2oEngineVersions', 'H2OEngineVersion'),
  {
    rpc: 'NotebookEngineImageService.CreateNotebookEngineImage',
    permissions: ['notebookEngineImages/CREATE'],
    request: () =>
      Promise.resolve({
        parent: WS,
        notebookEngineImageId: fresh('i'),
        notebookEngineImage: { image: 'jupyter:2' },
      }),
  },
  {
    rpc: 'NotebookEngineImageService.GetNotebookEngineImage',
    permissions: ['notebookEngineImages/GET'],
    request: async () => ({
      name: await post('notebookEngineImages', fresh('i'), { image: 'j:1' }, 'admin'),
    }),
  },
  {
    rpc: 'NotebookEngineImageService.ListNotebookEngineImages',
    permissions: ['notebookEngineImages/LIST'],
    request: () => Promise.resolve({ parent: WS }),
  },
  {
    rpc: 'NotebookEngineImageService.UpdateNotebookEngineImage',
    permissions: ['notebookEngineImages/UPDATE'],
    request: async () => ({
      notebookEngineImage: {
        name: await post('notebookEngineImages', fresh('i'), { image: 'j:1' }, 'admin'),
        displayName: 'Renamed',
      },
      updateMask: 'display_name',
    }),
  },
  {
    rpc: 'NotebookEngineImageService.DeleteNotebookEngineImage',
    permissions: ['notebookEngineImages/DELETE'],
    request: async () => ({
      name: await post('notebookEngineImages', fresh('i'), { image: 'j:1' }, 'admin'),
    }),
  },
];

ROWS.push(
  ...catalogueRows('SandboxEngineImage', () => ({ image: 'python:3.12' }), {
    field: 'displayName',
    value: 'Renamed',
  }),
  ...catalogueRows(
    'SandboxEngineTemplate',
    () => ({ memoryBytesLimit: String(GIB), maxIdleDuration: '0s', maxRunningDuration: '0s' }),
    { field: 'displayName', value: 'Renamed' },
  ),
  {
    rpc: 'SandboxEngineService.CreateSandboxEngine',
    permissions: ['sandboxEngines/CREATE'],
    request: async () => {
      await sandboxEngine();
      return {
        parent: WS,
        sandboxEngineId: fresh('s'),
        sandboxEngine: {
          sandboxEngineImage: `${WS}/sandboxEngineImages/python`,
          sandboxEngineTemplate: `${WS}/sandboxEngineTemplates/small`,
        },
      };
    },
  },
  {
    rpc: 'SandboxEngineService.GetSandboxEngine',
    permissions: ['sandboxEngines/GET'],
    request: async () => ({ name: await sandboxEngine() }),
  },
  {
    rpc: 'SandboxEngineService.ListSandboxEngines',
    permissions: ['sandboxEngines/LIST'],
    request: () => Promise.resolve({ parent: WS }),
  },
  {
    rpc: 'SandboxEngineService.TerminateSandboxEngine',
    permissions: ['sandboxEngines/TERMINATE'],
    request: async () => ({ name: await sandboxEngine() }),
  },
  {
    rpc: 'SandboxEngineService.DeleteSandboxEngine',
    permissions: ['sandboxEngines/DELETE'],
    request: async () => ({ name: await sandboxEngine() }),
  },
  ...inEngineRows('RUN_PROCESSES', [
    { rpc: 'ProcessService.CreateProcess', request: (e) => ({ parent: e, process: { command: 'true' } }) },
    { rpc: 'ProcessService.GetProcess', request: (e) => ({ name: process(e) }), outcome: Code.NOT_FOUND },
    { rpc: 'ProcessService.ListProcesses', request: (e) => ({ parent: e }), outcome: Code.OK },
    { rpc: 'ProcessService.StartProcess', request: (e) => ({ name: process(e) }) },
    { rpc: 'ProcessService.SendSignal', request: (e) => ({ name: process(e), signal: 15 }) },
    { rpc: 'ProcessService.WaitProcess', request: (e) => ({ name: process(e) }), outcome: Code.NOT_FOUND },
    { rpc: 'ProcessService.ReadOutput', request: (e) => ({ name: process(e) }), outcome: Code.NOT_FOUND },
    {
      rpc: 'ProcessService.ReadOutputFrames',
      request: (e) => ({ name: process(e) }),
      outcome: Code.NOT_FOUND,
    },
    { rpc: 'ProcessService.StreamOutput', request: (e) => ({ name: process(e) }), outcome: Code.NOT_FOUND },
  ]),
  ...inEngineRows(
    'ACCESS_FILES',
    ['ReadFile', 'Remove', 'ListDirectory', 'StatFile', 'MakeDirectory'].map((rpc) => ({
      rpc: `FilesystemService.${rpc}`,
      request: (e: string) => ({ name: e, path: '/workspace/a' }),
    })),
  ),
  ...inEngineRows('ACCESS_FILES', [
    {
      rpc: 'FilesystemService.WriteFile',
      request: (e) => ({ name: e, path: '/workspace/a', content: 'aGk=' }),
    },
    {
      rpc: 'FilesystemService.Move',
      request: (e) => ({ name: e, sourcePath: '/workspace/a', destinationPath: '/workspace/b' }),
    },
  ]),
  ...inEngineRows('TRANSFER_DRIVE_FILES', [
    {
      rpc: 'H2ODriveService.DownloadFile',
      request: (e) => ({ name: e, remotePath: 'a', localPath: '/workspace/a' }),
    },
    {
      rpc: 'H2ODriveService.UploadFile',
      request: (e) => ({ name: e, remotePath: 'a', localPath: '/workspace/a' }),
    },
  ]),
  ...inEngineRows('REVEAL_SECRETS', [
    {
      rpc: 'H2OSecureStoreService.RevealSecretToFile',
      request: (e) => ({
        name: e,
        secretVersion: 'workspaces/w/secrets/s/versions/latest',
        path: '/home/sandbox/.s',
      }),
    },
  ]),
  ...inEngineRows('EXPOSE_PORTS', [
    { rpc: 'PortService.CreatePort', request: (e) => ({ parent: e, portId: '8080', port: {} }) },
    { rpc: 'PortService.GetPort', request: (e) => ({ name: `${e}/ports/8080` }) },
    { rpc: 'PortService.ListPorts', request: (e) => ({ parent: e }) },
    {
      rpc: 'PortService.UpdatePort',
      request: (e) => ({ port: { name: `${e}/ports/8080`, public: false }, updateMask: 'public' }),
    },
    { rpc: 'PortService.DeletePort', request: (e) => ({ name: `${e}/ports/8080` }) },
  ]),
  ...inEngineRows('READ_METRICS', [{ rpc: 'MetricsService.ReadMetrics', request: (e) => ({ name: e }) }]),
  {
    rpc: 'DAILicenseService.GetDAILicenseMetadata',
    // Any signed-in user may see the installation's license.
    permissions: [],
    request: () => Promise.resolve({}),
  },
);

/** A token the issuer never signed: right claims, a key of nobody's. */
async function forgedToken(): Promise<string> {
  const key = await generateSigningKey();
  const { provider } = identity();
  return new SignJWT({ realm_access: { roles: ['admin'] } })
    .setProtectedHeader({ alg: 'RS256', kid: key.kid })
    .setSubject('admin')
    .setIssuer(provider.issuer)
    .setAudience(provider.audience)
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(await importJWK(key, 'RS256'));
}

type Caller =
  | 'no token'
  | 'a bad token'
  | 'a user without the permission'
  | 'a user with the permission'
  | 'an administrator';

/** The Authorization header of each caller of a row, or none. */
async function tokenOf(caller: Caller, row: Row): Promise<string | undefined> {
  switch (caller) {
    case 'no token':
      return undefined;
    case 'a bad token':
      return forgedToken();
    case 'a user without the permission':
      return memberToken(EVERY_ROLE.filter((role) => !row.permissions.includes(role)));
    case 'a user with the permission':
      return memberToken(row.permissions);
    case 'an administrator':
      return identity().token('admin');
  }
}

function expected(caller: Caller, row: Row): number {
  switch (caller) {
    case 'no token':
    case 'a bad token':
      return Code.UNAUTHENTICATED;
    case 'a user without the permission':
      return row.permissions.length === 0 ? Code.OK : Code.PERMISSION_DENIED;
    case 'a user with the permission':
      return row.permitted ?? row.outcome ?? Code.OK;
    case 'an administrator':
      return row.outcome ?? Code.OK;
  }
}

/** Requests of calls that are refused before anything is looked up: one per row, made once. */
const REFUSED = new Map<Row, Message>();

/** A fresh request where the call should carry it out, the row's refused request otherwise. */
async function requestFor(row: Row, code: number): Promise<Message> {
  if (code === Code.OK || code === row.permitted || code === row.outcome) return row.request();
  let request = REFUSED.get(row);
  if (request === undefined) {
    request = await row.request();
    REFUSED.set(row, request);
  }
  return request;
}

beforeAll(async () => {
  await defineCatalogue(api(), { workspace: W, headers: await identity().headers('admin') });
});

test('the table has a row for every RPC of the API, and every permission is checked by some RPC', () => {
  expect([...new Set(ROWS.map((r) => r.rpc))].sort()).toEqual([...RPCS].sort());
  const checked = new Set(ROWS.flatMap((r) => r.permissions));
  expect([...checked].sort()).toEqual(
    PERMISSIONS.filter((p) => p !== ADMINISTER)
      .map(short)
      .sort(),
  );
});

const CALLERS: Caller[] = [
  'no token',
  'a bad token',
  'a user without the permission',
  'a user with the permission',
  'an administrator',
];

describe.each(ROWS.map((row) => [`${row.rpc}${row.label ? ` (${row.label})` : ''}`, row] as const))(
  '%s',
  (_name, row) => {
    test.each(CALLERS)('for %s', async (caller) => {
      const code = expected(caller, row);
      const token = await tokenOf(caller, row);
      const auth = token === undefined ? undefined : bearer(token);
      const rest: Outcome = await overRest(api(), {
        rpc: row.rpc,
        message: await requestFor(row, code),
        headers: auth?.headers ?? {},
      });
      expect({ code: rest.code, httpStatus: rest.code === 0 ? 200 : rest.message?.['httpStatus'] }).toEqual({
        code,
        httpStatus: code === 0 ? 200 : HTTP_STATUS[code as Code],
      });
      const grpc = await overGrpc(api(), {
        rpc: row.rpc,
        message: await requestFor(row, code),
        metadata: auth?.metadata ?? new Metadata(),
      });
      expect(grpc.code).toBe(code);
    });
  },
);
