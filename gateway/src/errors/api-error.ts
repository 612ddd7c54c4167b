import { Code, codeName, HTTP_STATUS } from './code.ts';

/** The domain of the ErrorInfo details this service attaches. */
export const ERROR_DOMAIN = 'engine.h2o.ai';

/** One invalid field, as AIP-193's BadRequest.FieldViolation. */
export interface FieldViolation {
  field: string;
  description: string;
}

/** A google.rpc.Status as JSON: the body of every REST error. */
export interface StatusJson {
  code: number;
  message: string;
  details: Record<string, unknown>[];
}

/**
 * The one error type of the API: a gRPC code, a message for people, and AIP-193 details
 * (an ErrorInfo with a machine-readable reason, and field violations for bad requests).
 * Domain code throws it; REST and gRPC adapters translate it, and nothing else.
 */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly code: Code;
  readonly reason: string;
  readonly violations: readonly FieldViolation[];

  constructor(
    code: Code,
    message: string,
    options: { reason?: string; violations?: FieldViolation[]; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.code = code;
    this.reason = options.reason ?? codeName(code);
    this.violations = options.violations ?? [];
  }

  /** The HTTP status of this error's code. */
  get httpStatus(): number {
    return HTTP_STATUS[this.code];
  }

  /** Whether the server, not the caller, is at fault: worth a log line with the cause. */
  get isServerFault(): boolean {
    const faults: readonly Code[] = [Code.INTERNAL, Code.UNKNOWN, Code.UNAVAILABLE, Code.DATA_LOSS];
    return faults.includes(this.code);
  }

  /** This error as a google.rpc.Status JSON body. */
  toStatus(): StatusJson {
    const details: Record<string, unknown>[] = [
      {
        '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
        reason: this.reason,
        domain: ERROR_DOMAIN,
        metadata: {},
      },
    ];
    if (this.violations.length > 0) {
      details.push({
        '@type': 'type.googleapis.com/google.rpc.BadRequest',
        fieldViolations: this.violations.map((v) => ({ field: v.field, description: v.description })),
      });
    }
    return { code: this.code, message: this.message, details };
  }

  /**
   * Any thrown value as an ApiError: ApiErrors as they are, anything else as INTERNAL with a
   * message that reveals nothing of the cause (which stays attached for the log).
   */
  static from(error: unknown): ApiError {
    if (error instanceof ApiError) return error;
    return new ApiError(Code.INTERNAL, 'Internal error', { cause: error });
  }
}

/** INVALID_ARGUMENT naming the offending field, e.g. `invalidArgument('cpu', 'must be at most 8')`. */
export function invalidArgument(field: string, description: string): ApiError {
  return new ApiError(Code.INVALID_ARGUMENT, `Invalid ${field}: ${description}`, {
    reason: 'INVALID_FIELD',
    violations: [{ field, description }],
  });
}

/** NOT_FOUND for a resource name. */
export function notFound(name: string): ApiError {
  return new ApiError(Code.NOT_FOUND, `"${name}" was not found`, { reason: 'RESOURCE_NOT_FOUND' });
}

/** UNAUTHENTICATED, saying no more than that: details of why a credential failed help attackers. */
export function unauthenticated(): ApiError {
  return new ApiError(Code.UNAUTHENTICATED, 'The request does not carry valid credentials', {
    reason: 'UNAUTHENTICATED',
  });
}

/** INVALID_ARGUMENT with every violation found, its message naming the first. */
export function invalidFields(violations: readonly FieldViolation[]): ApiError {
  const [first, ...rest] = violations;
  if (first === undefined) throw new Error('invalidFields() needs at least one violation');
  const more = rest.length === 0 ? '' : ` (and ${rest.length} more)`;
  return new ApiError(Code.INVALID_ARGUMENT, `Invalid ${first.field}: ${first.description}${more}`, {
    reason: 'INVALID_FIELD',
    violations: [...violations],
  });
}
