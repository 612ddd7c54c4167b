import type { Caller } from '../auth/authorizer.ts';

/** What a handler knows about the call besides its request message. */
export interface CallContext {
  /** The verified identity of whoever made the call. */
  caller: Caller;
  /** Aborts when the caller goes away (a closed connection, a cancelled call). */
  signal?: AbortSignal;
}

/**
 * What the handler of a server-streaming RPC answers: its messages, each sent as it comes. REST
 * sends them as newline-delimited `{"result": …}` envelopes in one chunked response; gRPC as
 * stream messages. The stream ends when the iteration does.
 */
export class ServerStream<M extends object = object> {
  readonly messages: AsyncIterable<M>;

  constructor(messages: AsyncIterable<M>) {
    this.messages = messages;
  }
}

/** Whether a handler answered a stream (a server-streaming RPC), of messages of whatever type. */
export function isServerStream(response: object): response is ServerStream {
  return response instanceof ServerStream;
}

/** An RPC implementation: the request message in, the response message out. */
export type Handler = (request: Record<string, unknown>, context: CallContext) => Promise<object>;

/** Implementations by `<service full name>.<rpc>`, e.g. `ai.h2o.engine.v1.DAIEngineService.GetDAIEngine`. */
export type Handlers = Readonly<Record<string, Handler>>;

/**
 * Request headers (REST) or metadata (gRPC) by lowercase name; the same names carry the same
 * credentials on both, e.g. `authorization: Bearer …`.
 */
export type CallHeaders = Readonly<Record<string, string | undefined>>;

/**
 * Establishes who is calling, before any handler runs.
 *
 * @throws ApiError UNAUTHENTICATED when the credentials are missing or not valid
 */
export type Authenticate = (headers: CallHeaders) => Promise<Caller>;
