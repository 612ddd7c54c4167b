/** Failed apiserver calls as API errors, for every caller of the cluster in the store. */
import { ApiError, notFound } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import { statusCode } from '../../../shared/watched-collection.ts';

/** The API error for a resource name that no object name can hold. */
export function unstorableName(name: string): ApiError {
  return new ApiError(Code.INVALID_ARGUMENT, `"${name}" is not a name that can be stored`, {
    reason: 'INVALID_NAME',
  });
}

/** The API error for a failed apiserver call. */
export function storeError(error: unknown, name: string, verb: string): ApiError {
  const status = statusCode(error);
  if (status === 404) return notFound(name);
  if (status === 409) {
    return verb === 'create'
      ? new ApiError(Code.ALREADY_EXISTS, `"${name}" already exists`, { reason: 'RESOURCE_EXISTS' })
      : new ApiError(Code.ABORTED, `"${name}" was changed concurrently; read it again and retry`, {
          reason: 'CONCURRENT_CHANGE',
        });
  }
  if (status === 422 || status === 400) {
    const message = `"${name}" was rejected by the stored schema: ${kubeMessage(error)}`;
    return new ApiError(Code.INVALID_ARGUMENT, message, { reason: 'SCHEMA_VIOLATION', cause: error });
  }
  if (status === undefined || status === 429 || status >= 500) {
    return new ApiError(Code.UNAVAILABLE, 'The cluster is unavailable; retry later', {
      reason: 'CLUSTER_UNAVAILABLE',
      cause: error,
    });
  }
  return ApiError.from(error);
}

function kubeMessage(error: unknown): string {
  const body = typeof error === 'object' && error !== null && 'body' in error ? error.body : undefined;
  try {
    const parsed = (typeof body === 'string' ? JSON.parse(body) : body) as { message?: string } | undefined;
    return parsed?.message ?? 'invalid value';
  } catch {
    return 'invalid value';
  }
}
