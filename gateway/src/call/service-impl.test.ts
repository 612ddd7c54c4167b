import { describe, expect, it } from '@jest/globals';
import { DAILicenseServiceService } from '../gen/ai/h2o/engine/v1/dai_license_service.pb.ts';
import { FileInfo } from '../gen/ai/h2o/engine/v1/file_info.pb.ts';
import { H2ODriveServiceService } from '../gen/ai/h2o/engine/v1/h2o_drive_service.pb.ts';
import { serviceHandlers, type ServiceImpl } from './service-impl.ts';

const context = { caller: { subject: 'users/1', displayName: 'One', roles: [] } };

describe('serviceHandlers', () => {
  it('keys each RPC by its full name, as REST and gRPC look it up, and hands it the request', async () => {
    const handlers = serviceHandlers(H2ODriveServiceService, {
      downloadFile: (request) =>
        Promise.resolve({ fileInfo: FileInfo.fromPartial({ path: request.localPath }) }),
      uploadFile: (request) => Promise.resolve({ bytesUploaded: String(request.remotePath.length) }),
    });
    expect(Object.keys(handlers).sort()).toEqual([
      'ai.h2o.engine.v1.H2ODriveService.DownloadFile',
      'ai.h2o.engine.v1.H2ODriveService.UploadFile',
    ]);
    const upload = handlers['ai.h2o.engine.v1.H2ODriveService.UploadFile'];
    const request = { name: 'n', localPath: '/a', remotePath: 'abc', workspace: '' };
    await expect(upload?.(request, context)).resolves.toEqual({ bytesUploaded: '3' });
  });
});

// Compile-time checks: the typecheck fails as soon as any of these stops being an error.

// @ts-expect-error an implementation must have every RPC of its service (uploadFile is missing)
export const missingRpc: ServiceImpl<typeof H2ODriveServiceService> = {
  downloadFile: () => Promise.resolve({}),
};

export const wrongResponseField: ServiceImpl<typeof DAILicenseServiceService> = {
  // @ts-expect-error a response field the message does not have (it is daiLicenseMetadata)
  getDaiLicenseMetadata: () => Promise.resolve({ licenseMetadata: undefined }),
};

export const wrongRequestField: ServiceImpl<typeof H2ODriveServiceService> = {
  downloadFile: (request) => {
    // @ts-expect-error a request field the message does not have (it is localPath)
    const path: unknown = request.path;
    return Promise.resolve({ fileInfo: FileInfo.fromPartial({ path: String(path) }) });
  },
  uploadFile: () => Promise.resolve({ bytesUploaded: '0' }),
};
