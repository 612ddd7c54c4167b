import { credentials, ServerCredentials, status, type ServiceError } from '@grpc/grpc-js';
import { notFound } from '../errors/api-error.ts';
import {
  DAIEngineProfileServiceClient,
  type GetDAIEngineProfileResponse,
} from '../gen/ai/h2o/engine/v1/dai_engine_profile_service.pb.ts';
import { ROUTES } from '../gen/routes.ts';
import type { Handlers } from '../rest/mux.ts';
import { grpcServer, handlerKey, SERVICE_DEFINITIONS } from './server.ts';

const SVC = 'ai.h2o.engine.v1.DAIEngineProfileService';
const handlers: Handlers = {
  [`${SVC}.GetDAIEngineProfile`]: (request) =>
    request['name'] === 'workspaces/w/daiEngineProfiles/missing'
      ? Promise.reject(notFound('workspaces/w/daiEngineProfiles/missing'))
      : Promise.resolve({ daiEngineProfile: { name: request['name'], displayName: 'Default', priority: 2 } }),
  [`${SVC}.DeleteDAIEngineProfile`]: () => Promise.reject(new Error('etcd said something private')),
};
const server = grpcServer(handlers);
let client: DAIEngineProfileServiceClient;

beforeAll(async () => {
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => {
      if (error) reject(error);
      else resolve(bound);
    });
  });
  client = new DAIEngineProfileServiceClient(`127.0.0.1:${port}`, credentials.createInsecure());
});

afterAll(async () => {
  client.close();
  await new Promise<void>((resolve) => {
    server.tryShutdown(() => {
      resolve();
    });
  });
});

function get(name: string): Promise<GetDAIEngineProfileResponse> {
  return new Promise((resolve, reject) => {
    client.getDaiEngineProfile({ name }, (error, response) => {
      if (error) reject(error);
      else resolve(response);
    });
  });
}

describe('grpcServer()', () => {
  test('serves an RPC through its handler over the gRPC wire format', async () => {
    const response = await get('workspaces/w/daiEngineProfiles/p1');
    expect(response.daiEngineProfile).toMatchObject({
      name: 'workspaces/w/daiEngineProfiles/p1',
      displayName: 'Default',
      priority: 2,
    });
  });

  test('answers an ApiError with its gRPC code and message', async () => {
    await expect(get('workspaces/w/daiEngineProfiles/missing')).rejects.toMatchObject({
      code: status.NOT_FOUND,
      details: '"workspaces/w/daiEngineProfiles/missing" was not found',
    } satisfies Partial<ServiceError>);
  });

  test('hides unexpected errors behind INTERNAL, and answers UNIMPLEMENTED without a handler', async () => {
    const settle =
      (resolve: () => void, reject: (e: ServiceError) => void) =>
      (error: ServiceError | null): void => {
        if (error) reject(error);
        else resolve();
      };
    const remove = new Promise<void>((resolve, reject) => {
      client.deleteDaiEngineProfile({ name: 'workspaces/w/daiEngineProfiles/p1' }, settle(resolve, reject));
    });
    const copy = new Promise<void>((resolve, reject) => {
      client.copyDaiEngineProfile(
        { name: 'workspaces/w/daiEngineProfiles/p1', parent: 'workspaces/x', daiEngineProfileId: 'p2' },
        settle(resolve, reject),
      );
    });
    await expect(remove).rejects.toMatchObject({ code: 13, details: 'Internal error' });
    await expect(copy).rejects.toMatchObject({ code: 12 });
  });

  test('names each RPC with the same key as its REST route, for all ten services', () => {
    const grpcKeys = SERVICE_DEFINITIONS.flatMap((d) =>
      Object.values(d).map((m) => handlerKey(m.path)),
    ).sort();
    const restKeys = [...new Set(ROUTES.map((r) => `${r.service}.${r.rpc}`))].sort();
    expect(SERVICE_DEFINITIONS).toHaveLength(10);
    expect(grpcKeys).toEqual(restKeys);
  });
});
