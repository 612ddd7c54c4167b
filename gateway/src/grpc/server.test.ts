import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import {
  credentials,
  loadPackageDefinition,
  makeGenericClientConstructor,
  Metadata,
  ServerCredentials,
  status,
  type ServiceClientConstructor,
  type ServiceError,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { service as healthService } from 'grpc-health-check';
import type { Authenticate, Handlers } from '../call/handler.ts';
import { notFound, unauthenticated } from '../errors/api-error.ts';
import {
  DAIEngineProfileServiceClient,
  type GetDAIEngineProfileResponse,
} from '../gen/ai/h2o/engine/v1/dai_engine_profile_service.pb.ts';
import { ROUTES } from '../gen/routes.ts';
import { grpcServer, handlerKey, SERVICE_DEFINITIONS } from './server.ts';

const SVC = 'ai.h2o.engine.v1.DAIEngineProfileService';
const handlers: Handlers = {
  [`${SVC}.GetDAIEngineProfile`]: (request, { caller }) =>
    request['name'] === 'workspaces/w/daiEngineProfiles/missing'
      ? Promise.reject(notFound('workspaces/w/daiEngineProfiles/missing'))
      : Promise.resolve({
          daiEngineProfile: {
            name: request['name'],
            displayName: 'Default',
            priority: 2,
            creator: caller.subject,
          },
        }),
  [`${SVC}.DeleteDAIEngineProfile`]: () => Promise.reject(new Error('etcd said something private')),
};
/** The `authorization` metadata names the caller; `Bearer invalid` is refused. */
const authenticate: Authenticate = (headers) => {
  const token = headers['authorization']?.replace(/^Bearer /, '') ?? 'users/anonymous';
  return token === 'invalid'
    ? Promise.reject(unauthenticated())
    : Promise.resolve({ subject: token, displayName: token, roles: [] });
};
const server = grpcServer(handlers, authenticate);
let client: DAIEngineProfileServiceClient;
let address: string;

beforeAll(async () => {
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => {
      if (error) reject(error);
      else resolve(bound);
    });
  });
  address = `127.0.0.1:${port}`;
  client = new DAIEngineProfileServiceClient(address, credentials.createInsecure());
});

afterAll(async () => {
  client.close();
  await new Promise<void>((resolve) => {
    server.tryShutdown(() => {
      resolve();
    });
  });
});

function get(name: string, metadata = new Metadata()): Promise<GetDAIEngineProfileResponse> {
  return new Promise((resolve, reject) => {
    client.getDaiEngineProfile({ name }, metadata, (error, response) => {
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

  test('hands the handler the caller named by the authorization metadata', async () => {
    const metadata = new Metadata();
    metadata.set('authorization', 'Bearer users/ada');
    expect((await get('workspaces/w/daiEngineProfiles/p1', metadata)).daiEngineProfile?.creator).toBe(
      'users/ada',
    );
    expect((await get('workspaces/w/daiEngineProfiles/p1')).daiEngineProfile?.creator).toBe(
      'users/anonymous',
    );
  });

  test('refuses bad credentials with UNAUTHENTICATED', async () => {
    const metadata = new Metadata();
    metadata.set('authorization', 'Bearer invalid');
    await expect(get('workspaces/w/daiEngineProfiles/p1', metadata)).rejects.toMatchObject({
      code: status.UNAUTHENTICATED,
    } satisfies Partial<ServiceError>);
  });

  test('reports SERVING on the standard health service, overall and per API service', async () => {
    const Health = makeGenericClientConstructor(healthService, 'Health');
    const health = new Health(address, credentials.createInsecure()) as unknown as {
      check(
        request: object,
        callback: (error: ServiceError | null, response: { status: string }) => void,
      ): void;
      close(): void;
    };
    const check = (service: string) =>
      new Promise<string>((resolve, reject) => {
        health.check({ service }, (error, response) => {
          if (error) reject(error);
          else resolve(response.status);
        });
      });
    await expect(check('')).resolves.toBe('SERVING');
    await expect(check('ai.h2o.engine.v1.DAIEngineProfileService')).resolves.toBe('SERVING');
    await expect(check('no.such.Service')).rejects.toMatchObject({ code: status.NOT_FOUND });
    health.close();
  });

  test('lists every API service through server reflection', async () => {
    const require = createRequire(import.meta.url);
    const protoRoot = join(dirname(require.resolve('@grpc/reflection/package.json')), 'build', 'proto');
    const definition = loadSync('grpc/reflection/v1/reflection.proto', {
      includeDirs: [protoRoot],
      keepCase: true,
    });
    const loaded = loadPackageDefinition(definition) as unknown as {
      grpc: { reflection: { v1: { ServerReflection: ServiceClientConstructor } } };
    };
    const reflection = new loaded.grpc.reflection.v1.ServerReflection(address, credentials.createInsecure());
    const stream = (
      reflection as unknown as { ServerReflectionInfo(): NodeJS.ReadWriteStream }
    ).ServerReflectionInfo();
    const answer = new Promise<{ list_services_response: { service: { name: string }[] } }>(
      (resolve, reject) => {
        stream.once('data', resolve);
        stream.once('error', reject);
      },
    );
    stream.write({ list_services: '' } as unknown as string);
    const names = (await answer).list_services_response.service.map((s) => s.name);
    stream.end();
    reflection.close();
    expect(names).toEqual(
      expect.arrayContaining(
        SERVICE_DEFINITIONS.map((d) => handlerKey(Object.values(d)[0]?.path ?? '').replace(/\.[^.]+$/, '')),
      ),
    );
    expect(names).toHaveLength(10);
  });
});
