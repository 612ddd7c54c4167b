import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  credentials,
  makeGenericClientConstructor,
  Metadata,
  ServerCredentials,
  status,
  type ServiceError,
} from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { ServerStream, type Authenticate, type Handlers } from '../call/handler.ts';
import { OutputStream } from '../gen/ai/h2o/engine/v1/process.pb.ts';
import { notFound, unauthenticated } from '../errors/api-error.ts';
import {
  DAIEngineProfileServiceClient,
  type GetDAIEngineProfileResponse,
} from '../gen/ai/h2o/engine/v1/dai_engine_profile_service.pb.ts';
import { ProcessServiceClient } from '../gen/ai/h2o/engine/v1/process_service.pb.ts';
import { ROUTES } from '../gen/routes.ts';
import { ensureBinaries } from '../../../test/cluster/binaries.ts';
import { grpcServer, handlerKey, notServing, SERVICE_DEFINITIONS } from './server.ts';

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
  ['ai.h2o.engine.v1.ProcessService.StreamOutput']: () =>
    Promise.resolve(
      new ServerStream(
        (async function* () {
          yield await Promise.resolve({
            stream: OutputStream.OUTPUT_STREAM_STDOUT,
            data: Buffer.from('hi\n'),
          });
          yield { stream: OutputStream.OUTPUT_STREAM_STDERR, data: Buffer.from('oops\n') };
        })(),
      ),
    ),
};
/** The `authorization` metadata names the caller; `Bearer invalid` is refused. */
const authenticate: Authenticate = (headers) => {
  const token = headers['authorization']?.replace(/^Bearer /, '') ?? 'users/anonymous';
  return token === 'invalid'
    ? Promise.reject(unauthenticated())
    : Promise.resolve({ subject: token, displayName: token, roles: [] });
};
const { server, health: serverHealth } = grpcServer(handlers, authenticate);
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

  test('names each RPC with the same key as its REST route, for all twenty services', () => {
    const grpcKeys = SERVICE_DEFINITIONS.flatMap((d) =>
      Object.values(d).map((m) => handlerKey(m.path)),
    ).sort();
    const restKeys = [...new Set(ROUTES.map((r) => `${r.service}.${r.rpc}`))].sort();
    expect(SERVICE_DEFINITIONS).toHaveLength(20);
    expect(grpcKeys).toEqual(restKeys);
  });

  test('streams a server-streaming RPC message by message; UNAUTHENTICATED without valid credentials', async () => {
    const processes = new ProcessServiceClient(address, credentials.createInsecure());
    const stream = (metadata: Metadata) =>
      new Promise<unknown[]>((resolve, reject) => {
        const messages: unknown[] = [];
        const call = processes.streamOutput(
          { name: 'workspaces/w/sandboxEngines/e1/processes/p1', skipReplay: false },
          metadata,
        );
        call.on('data', (message: unknown) => messages.push(message));
        call.on('error', reject);
        call.on('end', () => {
          resolve(messages);
        });
      });
    const invalid = new Metadata();
    invalid.set('authorization', 'Bearer invalid');
    await expect(stream(invalid)).rejects.toMatchObject({ code: status.UNAUTHENTICATED });
    expect(await stream(new Metadata())).toEqual([
      { stream: OutputStream.OUTPUT_STREAM_STDOUT, data: Buffer.from('hi\n') },
      { stream: OutputStream.OUTPUT_STREAM_STDERR, data: Buffer.from('oops\n') },
    ]);
    processes.close();
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

  test('reports SERVING on the standard health service, overall and per API service, until told it is stopping', async () => {
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
    // A stopping gateway says so to gRPC health checkers too, overall and per service.
    notServing(serverHealth);
    await expect(check('')).resolves.toBe('NOT_SERVING');
    await expect(check('ai.h2o.engine.v1.DAIEngineProfileService')).resolves.toBe('NOT_SERVING');
    health.close();
  });

  test('answers an unknown method UNAUTHENTICATED without valid credentials, UNIMPLEMENTED with them', async () => {
    const Generic = makeGenericClientConstructor({}, 'Nothing');
    const generic = new Generic(address, credentials.createInsecure());
    const call = (metadata: Metadata) =>
      new Promise((resolve, reject) => {
        generic.makeUnaryRequest(
          '/no.such.Service/Nothing',
          (value: Buffer) => value,
          (bytes: Buffer) => bytes,
          Buffer.alloc(0),
          metadata,
          (error, value) => {
            if (error) reject(error);
            else resolve(value);
          },
        );
      });
    const invalid = new Metadata();
    invalid.set('authorization', 'Bearer invalid');
    await expect(call(invalid)).rejects.toMatchObject({ code: status.UNAUTHENTICATED });
    await expect(call(new Metadata())).rejects.toMatchObject({ code: status.UNIMPLEMENTED });
    generic.close();
  });

  describe('server reflection, as grpcurl uses it without .proto files', () => {
    /** grpcurl's output for `grpcurl -plaintext [flags] <address> [what...]`. */
    let grpcurl: (what: string[], flags?: string[]) => Promise<string>;
    beforeAll(async () => {
      const { grpcurl: folder } = await ensureBinaries();
      grpcurl = async (what, flags = []) =>
        (await promisify(execFile)(join(folder, 'grpcurl'), ['-plaintext', ...flags, address, ...what]))
          .stdout;
    });

    test('lists the twenty API services, health and reflection', async () => {
      const names = (await grpcurl(['list'])).trim().split('\n');
      const api = SERVICE_DEFINITIONS.map((d) =>
        handlerKey(Object.values(d)[0]?.path ?? '').replace(/\.[^.]+$/, ''),
      );
      expect(names.sort()).toEqual(
        [...api, 'grpc.health.v1.Health', 'grpc.reflection.v1.ServerReflection'].sort(),
      );
    });

    test.each(
      SERVICE_DEFINITIONS.map((d) => handlerKey(Object.values(d)[0]?.path ?? '').replace(/\.[^.]+$/, '')),
    )('describes %s, resolving the well-known types its messages use', async (service) => {
      expect(await grpcurl(['describe', service])).toContain(`${service} is a service:`);
    });

    test('describes messages with their well-known types, and the health service', async () => {
      expect(await grpcurl(['describe', 'ai.h2o.engine.v1.ProfileConstraintDuration'])).toContain(
        '.google.protobuf.Duration min = 1',
      );
      expect(await grpcurl(['describe', 'grpc.health.v1.Health'])).toContain('rpc Check');
    });

    test('calls a method from reflection alone, JSON in and out', async () => {
      const out = await grpcurl(
        [`${SVC}/GetDAIEngineProfile`],
        ['-H', 'authorization: Bearer users/grpcurl', '-d', '{"name": "workspaces/w/daiEngineProfiles/p1"}'],
      );
      expect(JSON.parse(out)).toMatchObject({
        daiEngineProfile: { name: 'workspaces/w/daiEngineProfiles/p1', creator: 'users/grpcurl' },
      });
    });
  });
});
