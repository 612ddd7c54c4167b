import { credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import { unauthenticated } from './errors/api-error.ts';
import { EngineServiceClient } from './gen/ai/h2o/engine/v1/engine_service.pb.ts';
import { startGateway, type Gateway } from './gateway.ts';

let gateway: Gateway;

beforeAll(async () => {
  gateway = await startGateway({
    host: '127.0.0.1',
    restPort: 0,
    grpcPort: 0,
    handlers: {},
    // Only calls with credentials pass; /version and the health checks need none.
    authenticate: (headers) =>
      headers['authorization'] === 'Bearer ok'
        ? Promise.resolve({ subject: 'users/u', displayName: 'U', roles: [] })
        : Promise.reject(unauthenticated()),
    version: '1.2.0',
  });
});

afterAll(async () => {
  await gateway.stop();
});

describe('startGateway()', () => {
  test('answers GET /version without credentials, and health checks', async () => {
    const version = await fetch(`${gateway.restUrl}/version`);
    expect(version.status).toBe(200);
    expect(await version.json()).toEqual({ version: '1.2.0' });
    expect((await fetch(`${gateway.restUrl}/healthz`)).status).toBe(200);
    expect((await fetch(`${gateway.restUrl}/readyz`)).status).toBe(200);
  });

  test('serves the API routes over REST and gRPC on separate ports', async () => {
    const rest = await fetch(`${gateway.restUrl}/v1/workspaces%2F-/engines`, {
      headers: { Authorization: 'Bearer ok' },
    });
    expect(rest.status).toBe(501);
    expect(await rest.json()).toMatchObject({ code: 12 });
    const client = new EngineServiceClient(gateway.grpcAddress, credentials.createInsecure());
    const metadata = new Metadata();
    metadata.set('authorization', 'Bearer ok');
    const error = await new Promise<ServiceError | null>((resolve) => {
      client.listEngines(
        { parent: 'workspaces/-', pageSize: 0, pageToken: '', orderBy: '', filter: '' },
        metadata,
        (e) => {
          resolve(e);
        },
      );
    });
    client.close();
    expect(error?.code).toBe(12);
  });

  test('authenticates API calls before routing, over REST and gRPC', async () => {
    const rest = await fetch(`${gateway.restUrl}/v1/no/such/route`);
    expect(rest.status).toBe(401);
    expect(await rest.json()).toMatchObject({ code: 16 });
    const client = new EngineServiceClient(gateway.grpcAddress, credentials.createInsecure());
    const error = await new Promise<ServiceError | null>((resolve) => {
      client.listEngines(
        { parent: 'workspaces/-', pageSize: 0, pageToken: '', orderBy: '', filter: '' },
        (e) => {
          resolve(e);
        },
      );
    });
    client.close();
    expect(error?.code).toBe(16);
  });
});
