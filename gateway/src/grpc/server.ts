import {
  Metadata,
  Server,
  status as GrpcStatus,
  type ServerDuplexStream,
  type ServerWritableStream,
  type ServiceDefinition,
  type ServiceError,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { ApiError } from '../errors/api-error.ts';
import { MAX_FILE_MESSAGE_BYTES } from '../sandbox/filesystem-service.ts';
import { Code, codeName } from '../errors/code.ts';
import { DAIEngineProfileServiceService } from '../gen/ai/h2o/engine/v1/dai_engine_profile_service.pb.ts';
import { DAIEngineServiceService } from '../gen/ai/h2o/engine/v1/dai_engine_service.pb.ts';
import { DAIEngineVersionServiceService } from '../gen/ai/h2o/engine/v1/dai_engine_version_service.pb.ts';
import { DAILicenseServiceService } from '../gen/ai/h2o/engine/v1/dai_license_service.pb.ts';
import { EngineServiceService } from '../gen/ai/h2o/engine/v1/engine_service.pb.ts';
import { FilesystemServiceService } from '../gen/ai/h2o/engine/v1/filesystem_service.pb.ts';
import { H2ODriveServiceService } from '../gen/ai/h2o/engine/v1/h2o_drive_service.pb.ts';
import { H2OEngineProfileServiceService } from '../gen/ai/h2o/engine/v1/h2o_engine_profile_service.pb.ts';
import { H2OEngineServiceService } from '../gen/ai/h2o/engine/v1/h2o_engine_service.pb.ts';
import { H2OEngineVersionServiceService } from '../gen/ai/h2o/engine/v1/h2o_engine_version_service.pb.ts';
import { H2OSecureStoreServiceService } from '../gen/ai/h2o/engine/v1/h2o_secure_store_service.pb.ts';
import { MetricsServiceService } from '../gen/ai/h2o/engine/v1/metrics_service.pb.ts';
import { NotebookEngineImageServiceService } from '../gen/ai/h2o/engine/v1/notebook_engine_image_service.pb.ts';
import { NotebookEngineProfileServiceService } from '../gen/ai/h2o/engine/v1/notebook_engine_profile_service.pb.ts';
import { NotebookEngineServiceService } from '../gen/ai/h2o/engine/v1/notebook_engine_service.pb.ts';
import { PortServiceService } from '../gen/ai/h2o/engine/v1/port_service.pb.ts';
import { ProcessServiceService } from '../gen/ai/h2o/engine/v1/process_service.pb.ts';
import { SandboxEngineImageServiceService } from '../gen/ai/h2o/engine/v1/sandbox_engine_image_service.pb.ts';
import { SandboxEngineServiceService } from '../gen/ai/h2o/engine/v1/sandbox_engine_service.pb.ts';
import { SandboxEngineTemplateServiceService } from '../gen/ai/h2o/engine/v1/sandbox_engine_template_service.pb.ts';
import { ROUTES } from '../gen/routes.ts';
import { fromJson, toJson } from '../json/canonical.ts';
import { log } from '../log.ts';
import type { HealthImplementation } from 'grpc-health-check';
import { addIntrospection } from './introspection.ts';
import { statusDetailsBin } from './status-details.ts';
import {
  ServerStream,
  type Authenticate,
  type CallHeaders,
  type Handler,
  type Handlers,
} from '../call/handler.ts';
import { handlerKey } from '../call/service-impl.ts';

/** Every service of the API, as ts-proto generates their grpc-js definitions. */
export const SERVICE_DEFINITIONS: readonly ServiceDefinition[] = [
  DAIEngineServiceService,
  H2OEngineServiceService,
  NotebookEngineServiceService,
  EngineServiceService,
  DAIEngineProfileServiceService,
  H2OEngineProfileServiceService,
  NotebookEngineProfileServiceService,
  DAIEngineVersionServiceService,
  H2OEngineVersionServiceService,
  NotebookEngineImageServiceService,
  SandboxEngineServiceService,
  SandboxEngineImageServiceService,
  SandboxEngineTemplateServiceService,
  ProcessServiceService,
  FilesystemServiceService,
  PortServiceService,
  H2ODriveServiceService,
  H2OSecureStoreServiceService,
  MetricsServiceService,
  DAILicenseServiceService,
];

export { handlerKey };

/** An ApiError (or anything thrown) as the error a grpc-js callback takes. */
export function toServiceError(error: unknown): Partial<ServiceError> {
  const api = ApiError.from(error);
  if (api.isServerFault) log.error({ err: api.cause ?? api, code: api.code }, api.message);
  // grpc-js numbers its status enum as gRPC does; look it up by name to stay type-safe.
  const code = GrpcStatus[codeName(api.code) as keyof typeof GrpcStatus];
  const metadata = new Metadata();
  metadata.set('grpc-status-details-bin', statusDetailsBin(api));
  return { code, details: api.message, message: api.message, metadata };
}

/** The full name of a service, e.g. `ai.h2o.engine.v1.DAIEngineService`. */
function serviceName(definition: ServiceDefinition): string {
  const [method] = Object.values(definition);
  return method === undefined ? '' : handlerKey(method.path).split('.').slice(0, -1).join('.');
}

/** Text metadata by name; binary (`-bin`) entries carry no credentials and are left out. */
function headersOf(metadata: Metadata): CallHeaders {
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(metadata.getMap())) {
    if (typeof value === 'string') headers[key] = value;
  }
  return headers;
}

/**
 * A server-streaming RPC: the handler answers a ServerStream, whose messages are written as they
 * come; the call ends with the stream. The handler sees the call's cancellation as its signal.
 */
function streamingMethod(key: string, handler: Handler | undefined, authenticate: Authenticate) {
  return (call: ServerWritableStream<Record<string, unknown>, unknown>): void => {
    const cancelled = new AbortController();
    call.on('cancelled', () => {
      cancelled.abort();
    });
    authenticate(headersOf(call.metadata))
      .then(async (caller) => {
        if (handler === undefined)
          throw new ApiError(Code.UNIMPLEMENTED, `${key.split('.').pop() ?? key} is not implemented`);
        const response = await handler(call.request, { caller, signal: cancelled.signal });
        if (!(response instanceof ServerStream)) throw new TypeError(`${key} answered no stream`);
        for await (const message of response.messages) {
          if (cancelled.signal.aborted) break;
          call.write(message);
        }
        call.end();
      })
      .catch((error: unknown) => {
        call.emit('error', toServiceError(error));
      });
  };
}

/**
 * A grpc-js server whose every RPC calls the same handlers as the REST router. RPCs without a
 * handler answer UNIMPLEMENTED.
 */
export function grpcServer(
  handlers: Handlers,
  authenticate: Authenticate,
): { server: Server; health: HealthImplementation } {
  // Sandbox files travel whole in one message: room for the largest, beyond gRPC's default 4 MiB.
  const server = new Server({
    'grpc.max_receive_message_length': MAX_FILE_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_FILE_MESSAGE_BYTES,
  });
  const responseTypes = new Map(ROUTES.map((r) => [`${r.service}.${r.rpc}`, r.responseType]));
  for (const definition of SERVICE_DEFINITIONS) {
    const implementation: UntypedServiceImplementation = {};
    for (const [method, attributes] of Object.entries(definition)) {
      const key = handlerKey(attributes.path);
      if (attributes.responseStream) {
        implementation[method] = streamingMethod(key, handlers[key], authenticate);
        continue;
      }
      implementation[method] = (
        call: { request: Record<string, unknown>; metadata: Metadata },
        callback: (error: Partial<ServiceError> | null, response?: object) => void,
      ) => {
        const handler = handlers[key];
        const result = authenticate(headersOf(call.metadata)).then((caller) =>
          handler
            ? handler(call.request, { caller })
            : Promise.reject(
                new ApiError(Code.UNIMPLEMENTED, `${key.split('.').pop() ?? key} is not implemented`),
              ),
        );
        // Handlers may leave fields unset, which the binary encoder cannot; the canonical codec
        // fills zero values exactly as REST clients see them. A failure there is an error too.
        const type = responseTypes.get(key);
        result
          .then((response) => (type === undefined ? response : fromJson(type, toJson(type, response))))
          .then(
            (response) => {
              callback(null, response);
            },
            (error: unknown) => {
              callback(toServiceError(error));
            },
          );
      };
    }
    server.addService(definition, implementation);
  }
  const health = addIntrospection(server, SERVICE_DEFINITIONS.map(serviceName));
  authenticateUnknownMethods(server, authenticate);
  return { server, health };
}

/** Every status the health service reports (overall and per service) set to NOT_SERVING. */
export function notServing(health: HealthImplementation): void {
  for (const name of ['', ...SERVICE_DEFINITIONS.map(serviceName)]) health.setStatus(name, 'NOT_SERVING');
}

/** A grpc-js method handler, as the server looks them up by path. */
interface MethodHandler {
  type: 'bidi';
  path: string;
  func: (call: ServerDuplexStream<Buffer, Buffer>) => void;
  serialize: (value: Buffer) => Buffer;
  deserialize: (bytes: Buffer) => Buffer;
}

/**
 * grpc-js answers a method it has no handler for with UNIMPLEMENTED before any interceptor runs,
 * which would tell a caller without credentials which methods exist, while REST answers 401
 * before routing. The server's handler lookup (`_retrieveHandler`, the one place both its call
 * paths ask) gets a fallback that authenticates first; only a known caller learns UNIMPLEMENTED.
 * A test pins this, so a grpc-js release that renames the lookup fails the suite, not production.
 */
function authenticateUnknownMethods(server: Server, authenticate: Authenticate): void {
  const lookup: unknown = Reflect.get(server, '_retrieveHandler');
  if (typeof lookup !== 'function')
    throw new Error('grpc-js no longer looks handlers up by _retrieveHandler');
  const unknownMethod = (path: string): MethodHandler => ({
    type: 'bidi',
    path,
    serialize: (value) => value,
    deserialize: (bytes) => bytes,
    func: (call) => {
      // Requests are not read: the call ends with its status whatever the client streams.
      authenticate(headersOf(call.metadata))
        .then(() => {
          throw new ApiError(Code.UNIMPLEMENTED, `The method ${path} is not implemented by this server`);
        })
        .catch((error: unknown) => {
          call.emit('error', toServiceError(error));
        });
    },
  });
  Reflect.set(server, '_retrieveHandler', (path: string): unknown => {
    const known: unknown = Reflect.apply(lookup, server, [path]);
    return known ?? unknownMethod(path);
  });
}
