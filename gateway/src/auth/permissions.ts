import { RESOURCE_KINDS } from '../../../shared/resources.ts';
import { ADMINISTER, LIST_ALL, PERMISSION_PREFIX } from './authorizer.ts';

const STANDARD = ['CREATE', 'GET', 'LIST', 'UPDATE', 'DELETE'] as const;

/** The actions each resource collection has, beside the standard five. */
const ACTIONS: Readonly<Record<string, readonly string[]>> = {
  [RESOURCE_KINDS.DAIEngine.collection]: [
    ...STANDARD,
    'PAUSE',
    'RESUME',
    'RESIZE_STORAGE',
    'UPGRADE_DAI_ENGINE_VERSION',
    'MIGRATE_CREATOR',
    'DOWNLOAD_LOGS',
  ],
  [RESOURCE_KINDS.H2OEngine.collection]: [...STANDARD, 'TERMINATE', 'DOWNLOAD_LOGS'],
  [RESOURCE_KINDS.NotebookEngine.collection]: [...STANDARD, 'PAUSE', 'RESUME', 'RESIZE_STORAGE', 'ACCESS'],
  [RESOURCE_KINDS.DAIEngineProfile.collection]: [...STANDARD, 'LIST_ASSIGNED'],
  [RESOURCE_KINDS.H2OEngineProfile.collection]: [...STANDARD, 'LIST_ASSIGNED'],
  [RESOURCE_KINDS.NotebookEngineProfile.collection]: [...STANDARD, 'LIST_ASSIGNED'],
  [RESOURCE_KINDS.DAIEngineVersion.collection]: [...STANDARD, 'ASSIGN_ALIASES'],
  [RESOURCE_KINDS.H2OEngineVersion.collection]: [...STANDARD, 'ASSIGN_ALIASES'],
  [RESOURCE_KINDS.NotebookEngineImage.collection]: STANDARD,
  [RESOURCE_KINDS.SandboxEngineImage.collection]: STANDARD,
  [RESOURCE_KINDS.SandboxEngineTemplate.collection]: STANDARD,
  // Sandboxes have no update; their in-engine services each have a permission of their own.
  [RESOURCE_KINDS.SandboxEngine.collection]: [
    'CREATE',
    'GET',
    'LIST',
    'DELETE',
    'TERMINATE',
    'RUN_PROCESSES',
    'ACCESS_FILES',
    'EXPOSE_PORTS',
    'READ_METRICS',
    'TRANSFER_DRIVE_FILES',
    'REVEAL_SECRETS',
  ],
};

/**
 * Every permission the API checks, `actions/enginemanager/{resource}/{ACTION}`. Policy files are
 * checked against it, so that a misspelt permission is an error rather than a grant of nothing.
 */
export const PERMISSIONS: readonly string[] = [
  ...Object.entries(ACTIONS).flatMap(([collection, actions]) =>
    actions.map((action) => `${PERMISSION_PREFIX}${collection}/${action}`),
  ),
  `${PERMISSION_PREFIX}engines/LIST`,
  LIST_ALL,
  ADMINISTER,
];
