import { randomBytes } from 'node:crypto';
import { RESOURCE_KINDS } from '../../../shared/resources.ts';
import { DEVELOPMENT_CALLER, type Authorizer, type Caller } from '../auth/authorizer.ts';
import { invalidArgument } from '../errors/api-error.ts';
import type { NotebookEngineImage } from '../gen/ai/h2o/engine/v1/notebook_engine_image.pb.ts';
import type {
  CreateNotebookEngineImageRequest,
  DeleteNotebookEngineImageRequest,
  GetNotebookEngineImageRequest,
  ListNotebookEngineImagesRequest,
  UpdateNotebookEngineImageRequest,
} from '../gen/ai/h2o/engine/v1/notebook_engine_image_service.pb.ts';
import { page } from '../list/pagination.ts';
import type { Handlers } from '../rest/mux.ts';
import type { ResourceStore } from '../store/store.ts';
import { checkDisplayName, parseName, resourceIdProblem } from '../validation/names.ts';
import { resolveUpdateMask } from '../validation/update-mask.ts';
import { applyMask } from './masks.ts';

const KIND = RESOURCE_KINDS.NotebookEngineImage;
const SERVICE = 'ai.h2o.engine.v1.NotebookEngineImageService';
const PERMISSION = 'actions/enginemanager/notebookEngineImages';

/** What the service needs from the rest of the gateway. */
export interface ServiceDeps {
  store: ResourceStore;
  authorizer: Authorizer;
  /** The caller of the current request; the development identity until authentication exists. */
  caller?: Caller;
  now?: () => Date;
}

/** The workspace of a parent `workspaces/{workspace}`. */
export function parentWorkspace(parent: string): string {
  const match = /^workspaces\/([^/]+)$/.exec(parent);
  if (match?.[1] === undefined || match[1] === '-')
    throw invalidArgument('parent', `"${parent}" is not a workspace name such as "workspaces/default"`);
  return match[1];
}

function workspaceOf(name: string): string {
  const parsed = parseName(name, KIND.collection);
  if (parsed === undefined) throw invalidArgument('name', `"${name}" is not a notebook engine image name`);
  return parsed.workspace;
}

/** A server-chosen id: a letter, then lowercase letters and digits. */
function generatedId(): string {
  return `image-${randomBytes(5).toString('hex')}`;
}

function checkImage(image: NotebookEngineImage, field: string): void {
  if (image.image.trim() === '') throw invalidArgument(`${field}.image`, 'is required');
  const displayName = checkDisplayName(`${field}.display_name`, image.displayName);
  if (displayName) throw displayName;
}

/** The RPCs of NotebookEngineImageService, keyed as REST and gRPC look them up. */
export function notebookEngineImageService(deps: ServiceDeps): Handlers {
  const caller = deps.caller ?? DEVELOPMENT_CALLER;
  const now = deps.now ?? ((): Date => new Date());
  const authorize = (action: string, workspace: string): Promise<void> =>
    deps.authorizer.check(caller, `${PERMISSION}/${action}`, workspace);

  return {
    [`${SERVICE}.CreateNotebookEngineImage`]: async (raw) => {
      const request = raw as unknown as CreateNotebookEngineImageRequest;
      const workspace = parentWorkspace(request.parent);
      await authorize('CREATE', workspace);
      const id = request.notebookEngineImageId === '' ? generatedId() : request.notebookEngineImageId;
      const idProblem = resourceIdProblem(id);
      if (idProblem) throw invalidArgument('notebook_engine_image_id', idProblem);
      const image = request.notebookEngineImage;
      if (image === undefined) throw invalidArgument('notebook_engine_image', 'is required');
      checkImage(image, 'notebook_engine_image');
      const record: NotebookEngineImage = {
        ...image,
        name: `workspaces/${workspace}/${KIND.collection}/${id}`,
        creator: caller.subject,
        creatorDisplayName: caller.displayName,
        updater: '',
        updaterDisplayName: '',
        updateTime: undefined,
      };
      const created = await deps.store.create(KIND, record);
      return { notebookEngineImage: created.message };
    },

    [`${SERVICE}.GetNotebookEngineImage`]: async (raw) => {
      const { name } = raw as unknown as GetNotebookEngineImageRequest;
      await authorize('GET', workspaceOf(name));
      return { notebookEngineImage: (await deps.store.get(KIND, name)).message };
    },

    [`${SERVICE}.ListNotebookEngineImages`]: async (raw) => {
      const request = raw as unknown as ListNotebookEngineImagesRequest;
      const workspace = parentWorkspace(request.parent);
      await authorize('LIST', workspace);
      const all = (await deps.store.list(KIND, workspace)).map((s) => s.message as { name: string });
      all.sort((a, b) => a.name.localeCompare(b.name));
      const { items, nextPageToken } = page(all, request, `parent=${request.parent}`);
      return { notebookEngineImages: items, nextPageToken };
    },

    [`${SERVICE}.UpdateNotebookEngineImage`]: async (raw) => {
      const request = raw as unknown as UpdateNotebookEngineImageRequest;
      const update = request.notebookEngineImage;
      if (update === undefined) throw invalidArgument('notebook_engine_image', 'is required');
      await authorize('UPDATE', workspaceOf(update.name));
      const paths = resolveUpdateMask('notebookEngineImage', request.updateMask);
      if (paths instanceof Error) throw paths;
      const current = await deps.store.get(KIND, update.name);
      const next = applyMask(current.message as unknown as NotebookEngineImage, update, paths);
      checkImage(next, 'notebook_engine_image');
      const record: NotebookEngineImage = {
        ...next,
        updater: caller.subject,
        updaterDisplayName: caller.displayName,
        updateTime: now(),
      };
      const saved = await deps.store.update(KIND, record, current.resourceVersion);
      return { notebookEngineImage: saved.message };
    },

    [`${SERVICE}.DeleteNotebookEngineImage`]: async (raw) => {
      const { name } = raw as unknown as DeleteNotebookEngineImageRequest;
      await authorize('DELETE', workspaceOf(name));
      await deps.store.delete(KIND, name);
      return {};
    },
  };
}
