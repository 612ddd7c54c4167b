/**
 * Typed implementations of the generated services. ts-proto describes each service as an object
 * of methods, each with its path and its request and response codecs; a {@link ServiceImpl} of
 * that description has one method per RPC that takes the typed request and answers the typed
 * response, so that an RPC left out, or a field the message does not have, fails to compile.
 * {@link serviceHandlers} turns one into the handlers that REST and gRPC look up by name.
 */
import type { CallContext, Handler, Handlers, ServerStream } from './handler.ts';

/** One RPC as ts-proto describes it (the fields this module reads). */
interface MethodDefinition {
  readonly path: string;
  readonly responseStream: boolean;
  requestDeserialize(value: Buffer): unknown;
  responseDeserialize(value: Buffer): unknown;
}

/** A generated service definition, e.g. `DAIEngineServiceService`. */
export type ServiceDefinition = Readonly<Record<string, MethodDefinition>>;

type RequestOf<M> = M extends { requestDeserialize(value: Buffer): infer R } ? R : never;
type ResponseOf<M> = M extends { responseDeserialize(value: Buffer): infer R extends object } ? R : never;

/** What one RPC answers: its response message, or a stream of them for a server-streaming RPC. */
type Answer<M> = M extends { responseStream: true } ? ServerStream<ResponseOf<M>> : ResponseOf<M>;

/** An implementation of every RPC of the service `S`. */
export type ServiceImpl<S extends ServiceDefinition> = {
  readonly [K in keyof S]: (request: RequestOf<S[K]>, context: CallContext) => Promise<Answer<S[K]>>;
};

/** The handler key of a gRPC method path: `/pkg.Service/Method` → `pkg.Service.Method`, as REST uses. */
export function handlerKey(path: string): string {
  return path.slice(1).replace('/', '.');
}

/**
 * One typed method as a handler. REST decodes the request with the route's request type and gRPC
 * with the method's own codec, both generated from the same definition the method is typed with:
 * the message a handler receives is the one its method takes.
 */
function handler<M extends MethodDefinition>(
  _definition: M,
  method: (request: RequestOf<M>, context: CallContext) => Promise<Answer<M>>,
): Handler {
  return (request, context) => method(request as RequestOf<M>, context);
}

/** The handlers of `implementation`, by `<service full name>.<rpc>`. */
export function serviceHandlers<S extends ServiceDefinition>(
  definition: S,
  implementation: ServiceImpl<S>,
): Handlers {
  const handlers: Record<string, Handler> = {};
  for (const key of Object.keys(definition) as (keyof S & string)[]) {
    const method = definition[key];
    if (method !== undefined) handlers[handlerKey(method.path)] = handler(method, implementation[key]);
  }
  return handlers;
}
