/**
 * H2O Drive and H2O Secure Store, as seen from a sandbox: files and secrets copied into (and
 * out of) the engine by the API on the caller's behalf. Both are services outside this product;
 * an installation connects them by giving the gateway a backend. Without one, every call is
 * FAILED_PRECONDITION saying so — after the usual checks on the caller and the engine, so that
 * the answer never tells anyone more about an engine than its other calls do.
 */
import type { Handler, Handlers } from '../call/handler.ts';
import { ApiError } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
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

function unconfigured(resolve: ResolveSandbox, service: string): Handler {
  return async (request, context) => {
    await resolve(request['name'] as string, context);
    throw notConfigured(service);
  };
}

/** H2ODriveService; `resolve` checks the caller's permission and the engine as every in-engine call does. */
export function h2oDriveService(resolve: ResolveSandbox): Handlers {
  const handler = unconfigured(resolve, 'H2O Drive');
  return {
    'ai.h2o.engine.v1.H2ODriveService.DownloadFile': handler,
    'ai.h2o.engine.v1.H2ODriveService.UploadFile': handler,
  };
}

/** H2OSecureStoreService, likewise. */
export function h2oSecureStoreService(resolve: ResolveSandbox): Handlers {
  return {
    'ai.h2o.engine.v1.H2OSecureStoreService.RevealSecretToFile': unconfigured(resolve, 'H2O Secure Store'),
  };
}
