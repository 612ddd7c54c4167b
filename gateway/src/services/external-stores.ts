/**
 * H2O Drive and H2O Secure Store, as seen from a sandbox: files and secrets copied into (and
 * out of) the engine by the API on the caller's behalf. Both are services outside this product;
 * an installation connects them by giving the gateway a backend. Without one, every call is
 * FAILED_PRECONDITION saying so — after the usual checks on the caller and the engine, so that
 * the answer never tells anyone more about an engine than its other calls do.
 */
import type { CallContext, Handlers } from '../call/handler.ts';
import { serviceHandlers } from '../call/service-impl.ts';
import { ApiError } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import { H2ODriveServiceService } from '../gen/ai/h2o/engine/v1/h2o_drive_service.pb.ts';
import { H2OSecureStoreServiceService } from '../gen/ai/h2o/engine/v1/h2o_secure_store_service.pb.ts';
import type { ResolveSandbox } from '../sandbox/target.ts';

/** An H2O Drive deployment, reached with the caller's identity. */
export interface DriveBackend {
  /** The bytes of `remotePath` in the Drive `workspace`. */
  download(request: { workspace: string; remotePath: string; subject: string }): Promise<Uint8Array>;
  /** Stores `data` at `remotePath`, replacing what was there. */
  upload(request: {
    workspace: string;
    remotePath: string;
    subject: string;
    data: Uint8Array;
  }): Promise<void>;
}

/** An H2O Secure Store deployment, reached with the caller's identity. */
export interface SecureStoreBackend {
  /** The value of a secret version (`…/versions/latest` resolved), if the caller may reveal it. */
  reveal(request: {
    secretVersion: string;
    subject: string;
  }): Promise<{ secretVersion: string; value: Uint8Array }>;
}

function notConfigured(service: string): ApiError {
  return new ApiError(
    Code.FAILED_PRECONDITION,
    `${service} is not configured in this installation: no ${service} backend is connected to the gateway`,
    { reason: 'BACKEND_NOT_CONFIGURED' },
  );
}

function unconfigured(
  resolve: ResolveSandbox,
  service: string,
): (request: { name: string }, context: CallContext) => Promise<never> {
  return async (request, context) => {
    await resolve(request.name, context);
    throw notConfigured(service);
  };
}

/** H2ODriveService; `resolve` checks the caller's permission and the engine as every in-engine call does. */
export function h2oDriveService(resolve: ResolveSandbox): Handlers {
  const handler = unconfigured(resolve, 'H2O Drive');
  return serviceHandlers(H2ODriveServiceService, { downloadFile: handler, uploadFile: handler });
}

/** H2OSecureStoreService, likewise. */
export function h2oSecureStoreService(resolve: ResolveSandbox): Handlers {
  return serviceHandlers(H2OSecureStoreServiceService, {
    revealSecretToFile: unconfigured(resolve, 'H2O Secure Store'),
  });
}
