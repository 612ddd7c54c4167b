/**
 * Notebook engines: one pod with a home volume. Their state enum has no CONNECTING: a pod that
 * runs but does not answer yet is still STARTING.
 */
import { RESOURCE_KINDS } from '../../../shared/resources.ts';
import { profileText, statusObject, type EngineKind } from './kind.ts';

export const notebookEngineKind: EngineKind = {
  kind: RESOURCE_KINDS.NotebookEngine.kind,
  plural: RESOURCE_KINDS.NotebookEngine.plural,
  collection: RESOURCE_KINDS.NotebookEngine.collection,
  prefix: 'nb',
  container: 'notebook',
  port: 8888,
  dataMountPath: '/home/jovyan',
  versionInfoField: 'notebookImageInfo',
  stopIntent: 'paused',
  stopStates: { stopping: 'STATE_PAUSING', stopped: 'STATE_PAUSED' },
  hasConnectingState: false,
  failureReasonField: 'failureReason',
  runningReplicas: () => 1,
  env: (engine) => {
    if (statusObject(engine, 'profileInfo')['syncGitRepositoryEnabled'] !== true) return [];
    return [
      { name: 'GIT_REPOSITORY', value: profileText(engine, 'gitRepository') },
      { name: 'GIT_REF', value: profileText(engine, 'gitRef') || 'HEAD' },
      { name: 'GIT_DIRECTORY_NAME', value: profileText(engine, 'gitDirectoryName') || 'Example' },
    ];
  },
  // Notebooks are reached through the API's :access call, which answers their address.
  urls: () => ({}),
  storageClass: (engine) => {
    const name = engine.status?.['storageClassName'];
    return typeof name === 'string' && name !== '' ? name : undefined;
  },
};
