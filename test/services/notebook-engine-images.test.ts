import { status } from '@grpc/grpc-js';
import { useApiServer } from '../helpers/api-server.ts';

const api = useApiServer({ namespace: 'images-test' });
const call = (method: string, path: string, body?: unknown) => api().rest(method, path, body);

const IMAGE = {
  displayName: 'Jupyter',
  image: 'registry.example.com/jupyter:1.0',
  enabled: true,
  imagePullPolicy: null,
  imagePullSecrets: [],
};

describe('NotebookEngineImageService over REST', () => {
  test('creates, gets, lists, updates and deletes an image', async () => {
    const created = await call(
      'POST',
      '/v1/workspaces%2Fglobal/notebookEngineImages?notebookEngineImageId=jupyter',
      IMAGE,
    );
    expect(created.status).toBe(200);
    expect(created.json['notebookEngineImage']).toMatchObject({
      name: 'workspaces/global/notebookEngineImages/jupyter',
      displayName: 'Jupyter',
      image: 'registry.example.com/jupyter:1.0',
      enabled: true,
      imagePullPolicy: 'IMAGE_PULL_POLICY_UNSPECIFIED',
      creator: 'users/developer',
      creatorDisplayName: 'Developer',
      updater: '',
    });
    expect((created.json['notebookEngineImage'] as Record<string, string>)['createTime']).toMatch(
      /^\d{4}-\d{2}-\d{2}T/,
    );

    const got = await call('GET', '/v1/workspaces%2Fglobal%2FnotebookEngineImages%2Fjupyter');
    expect(got.json).toEqual(created.json);

    // The client sends every field, with a mask naming the ones to change.
    const updated = await call(
      'PATCH',
      '/v1/workspaces%2Fglobal%2FnotebookEngineImages%2Fjupyter?updateMask=display_name%2Cenabled',
      { ...IMAGE, displayName: 'Jupyter 2', enabled: false, image: 'ignored:outside-the-mask' },
    );
    expect(updated.status).toBe(200);
    expect(updated.json['notebookEngineImage']).toMatchObject({
      displayName: 'Jupyter 2',
      enabled: false,
      image: 'registry.example.com/jupyter:1.0',
      updater: 'users/developer',
    });

    const list = await call('GET', '/v1/workspaces%2Fglobal/notebookEngineImages?pageSize=0&pageToken=');
    expect(list.json).toEqual({
      notebookEngineImages: [updated.json['notebookEngineImage']],
      nextPageToken: '',
    });

    expect((await call('DELETE', '/v1/workspaces%2Fglobal%2FnotebookEngineImages%2Fjupyter')).status).toBe(
      200,
    );
    expect((await call('GET', '/v1/workspaces%2Fglobal%2FnotebookEngineImages%2Fjupyter')).status).toBe(404);
  });

  test('generates an id when none is given, and pages through a workspace', async () => {
    for (let i = 0; i < 3; i++) {
      const created = await call('POST', '/v1/workspaces%2Fpaged/notebookEngineImages', IMAGE);
      expect((created.json['notebookEngineImage'] as { name: string }).name).toMatch(
        /^workspaces\/paged\/notebookEngineImages\/image-[0-9a-f]{10}$/,
      );
    }
    const first = await call('GET', '/v1/workspaces%2Fpaged/notebookEngineImages?pageSize=2');
    expect(first.json['notebookEngineImages']).toHaveLength(2);
    const second = await call(
      'GET',
      `/v1/workspaces%2Fpaged/notebookEngineImages?pageSize=2&pageToken=${String(first.json['nextPageToken'])}`,
    );
    expect(second.json).toMatchObject({ nextPageToken: '' });
    expect(second.json['notebookEngineImages']).toHaveLength(1);
    const bad = await call('GET', '/v1/workspaces%2Fpaged/notebookEngineImages?pageToken=forged');
    expect(bad.status).toBe(400);
  });

  test.each<[string, string, string, unknown, number, string]>([
    [
      'an id that breaks the pattern',
      'POST',
      '/v1/workspaces%2Fglobal/notebookEngineImages?notebookEngineImageId=Bad_Id',
      IMAGE,
      400,
      'notebook_engine_image_id',
    ],
    [
      'a missing image',
      'POST',
      '/v1/workspaces%2Fglobal/notebookEngineImages?notebookEngineImageId=no-image',
      { ...IMAGE, image: '' },
      400,
      'notebook_engine_image.image',
    ],
    [
      'a display name over 63 characters',
      'POST',
      '/v1/workspaces%2Fglobal/notebookEngineImages?notebookEngineImageId=long',
      { ...IMAGE, displayName: 'x'.repeat(64) },
      400,
      'display_name',
    ],
    [
      'an empty update mask',
      'PATCH',
      '/v1/workspaces%2Fglobal%2FnotebookEngineImages%2Fx?updateMask=',
      IMAGE,
      400,
      'update_mask',
    ],
    [
      'an unknown mask path',
      'PATCH',
      '/v1/workspaces%2Fglobal%2FnotebookEngineImages%2Fx?updateMask=displayName',
      IMAGE,
      400,
      'unknown path "displayName"',
    ],
    [
      'an update of a missing image',
      'PATCH',
      '/v1/workspaces%2Fglobal%2FnotebookEngineImages%2Fmissing?updateMask=%2A',
      IMAGE,
      404,
      'was not found',
    ],
    ['listing every workspace', 'GET', '/v1/workspaces%2F-/notebookEngineImages', undefined, 400, 'parent'],
  ])('refuses %s and writes nothing', async (_what, method, path, body, status, message) => {
    const response = await call(method, path, body);
    expect(response.status).toBe(status);
    expect(String(response.json['message'])).toContain(message);
    const names = (
      (await call('GET', '/v1/workspaces%2Fglobal/notebookEngineImages')).json['notebookEngineImages'] as {
        name: string;
      }[]
    ).map((i) => i.name);
    expect(names.filter((n) => /no-image|long|Bad_Id|missing/.test(n))).toEqual([]);
  });

  test('a second create of the same id is ALREADY_EXISTS (409)', async () => {
    await call('POST', '/v1/workspaces%2Fglobal/notebookEngineImages?notebookEngineImageId=twice', IMAGE);
    const again = await call(
      'POST',
      '/v1/workspaces%2Fglobal/notebookEngineImages?notebookEngineImageId=twice',
      IMAGE,
    );
    expect(again.status).toBe(409);
    expect(again.json).toMatchObject({ code: 6 });
  });
});

describe('NotebookEngineImageService over gRPC', () => {
  const rpc = (method: string, request: object) =>
    api().grpc(`NotebookEngineImageService.${method}`, request);

  test('serves create (with a generated id), get, list, update and delete', async () => {
    const image = {
      displayName: 'Lab',
      image: 'lab:1',
      enabled: true,
      imagePullPolicy: 0,
      imagePullSecrets: [],
    };
    const created = await rpc('CreateNotebookEngineImage', {
      parent: 'workspaces/grpc',
      notebookEngineImageId: '',
      notebookEngineImage: image,
    });
    const name = (created['notebookEngineImage'] as { name: string }).name;
    expect(name).toMatch(/^workspaces\/grpc\/notebookEngineImages\/image-[0-9a-f]{10}$/);
    expect(await rpc('GetNotebookEngineImage', { name })).toEqual(created);
    const list = await rpc('ListNotebookEngineImages', {
      parent: 'workspaces/grpc',
      pageSize: 0,
      pageToken: '',
    });
    expect(list).toEqual({ notebookEngineImages: [created['notebookEngineImage']], nextPageToken: '' });
    const updated = await rpc('UpdateNotebookEngineImage', {
      notebookEngineImage: { ...image, name, enabled: false },
      updateMask: ['enabled'],
    });
    expect(updated['notebookEngineImage']).toMatchObject({ enabled: false, displayName: 'Lab' });
    expect(await rpc('DeleteNotebookEngineImage', { name })).toEqual({});
    await expect(rpc('GetNotebookEngineImage', { name })).rejects.toMatchObject({ code: status.NOT_FOUND });
    await expect(
      rpc('CreateNotebookEngineImage', {
        parent: 'workspaces/grpc',
        notebookEngineImageId: 'x',
        notebookEngineImage: { ...image, image: '' },
      }),
    ).rejects.toMatchObject({ code: status.INVALID_ARGUMENT });
  });
});
