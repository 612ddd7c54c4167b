/**
 * Notebook engines: one pod with a home volume, serving Jupyter under the path of the address the
 * API's `:access` hands out. Users run their own code in them, so they get the hardening of
 * sandboxes where Jupyter works with it: uid 1000, no capabilities, a read-only root, writes only
 * to the home volume and `/tmp`. Their state enum has no CONNECTING: a pod that runs but does not
 * answer yet is still STARTING.
 */
import type { V1EnvVar } from '@kubernetes/client-node';
import { RESOURCE_KINDS } from '../../../shared/resources.ts';
import { jupyterActivityProbe } from '../activity/jupyter.ts';
import { unprivilegedEngine } from './engine-user.ts';
import { enginePath, type EngineKind, type EngineResource } from './kind.ts';
import { profileSizing } from './profile-sizing.ts';

const HOME = '/home/jovyan';

/** The profile's repository, cloned into the home volume by the image, when the profile asks for it. */
function gitSync(engine: EngineResource<'NotebookEngine'>): V1EnvVar[] {
  const profile = engine.status?.profileInfo;
  if (profile?.syncGitRepositoryEnabled !== true) return [];
  return [
    { name: 'GIT_REPOSITORY', value: profile.gitRepository ?? '' },
    { name: 'GIT_REF', value: profile.gitRef || 'HEAD' },
    { name: 'GIT_DIRECTORY_NAME', value: profile.gitDirectoryName || 'Example' },
  ];
}

export const notebookEngineKind: EngineKind<'NotebookEngine'> = {
  kind: 'NotebookEngine',
  plural: RESOURCE_KINDS.NotebookEngine.plural,
  collection: RESOURCE_KINDS.NotebookEngine.collection,
  prefix: 'nb',
  container: 'notebook',
  port: 8888,
  dataMountPath: HOME,
  storageBytes: (engine) => engine.spec.storageBytes,
  snapshots: (engine) => ({
    profile: engine.status?.profileInfo,
    version: engine.status?.notebookImageInfo,
  }),
  sizing: profileSizing,
  queuePriority: (engine) => engine.status?.profileInfo?.queuePriority ?? 0,
  stopIntent: 'paused',
  stopStates: { stopping: 'STATE_PAUSING', stopped: 'STATE_PAUSED' },
  hasConnectingState: false,
  failureReason: { field: 'failureReason', of: (engine) => engine.status?.failureReason },
  runningReplicas: () => 1,
  env: (engine, { settings }) => [
    // Jupyter's base_url in the image: the path of the address users open, without the slash.
    { name: 'NB_PREFIX', value: enginePath(notebookEngineKind, engine, settings) },
    // The home volume: settings, kernels' files and `pip install --user` land on the claim.
    { name: 'HOME', value: HOME },
    ...gitSync(engine),
  ],
  isolation: () => unprivilegedEngine(),
  // Notebooks are reached through the API's :access call, which answers their address.
  urls: () => ({}),
  storageClass: (engine) => {
    const name = engine.status?.storageClassName;
    return typeof name === 'string' && name !== '' ? name : undefined;
  },
  // A kernel running a cell, or used since the idle time began, keeps the notebook running.
  activityProbe: jupyterActivityProbe,
};
