/** gRPC status codes, with their gRPC numbering. */
export const Code = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;

export type Code = (typeof Code)[keyof typeof Code];

/**
 * The HTTP status of each code, as grpc-gateway maps them, so REST clients see what they see
 * from any gRPC-transcoding gateway.
 *
 * Warning: FAILED_PRECONDITION is 400, not 412. HTTP 412 is about conditional request headers
 * (If-Match…), while FAILED_PRECONDITION means the system is not in a state the call needs.
 * CANCELLED is 499, the status nginx uses for a client that went away.
 */
export const HTTP_STATUS: Readonly<Record<Code, number>> = {
  [Code.OK]: 200,
  [Code.CANCELLED]: 499,
  [Code.UNKNOWN]: 500,
  [Code.INVALID_ARGUMENT]: 400,
  [Code.DEADLINE_EXCEEDED]: 504,
  [Code.NOT_FOUND]: 404,
  [Code.ALREADY_EXISTS]: 409,
  [Code.PERMISSION_DENIED]: 403,
  [Code.RESOURCE_EXHAUSTED]: 429,
  [Code.FAILED_PRECONDITION]: 400,
  [Code.ABORTED]: 409,
  [Code.OUT_OF_RANGE]: 400,
  [Code.UNIMPLEMENTED]: 501,
  [Code.INTERNAL]: 500,
  [Code.UNAVAILABLE]: 503,
  [Code.DATA_LOSS]: 500,
  [Code.UNAUTHENTICATED]: 401,
};

/** The name of a code, e.g. `INVALID_ARGUMENT`. */
export function codeName(code: Code): string {
  return Object.entries(Code).find(([, value]) => value === code)?.[0] ?? 'UNKNOWN';
}
