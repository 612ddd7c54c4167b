/** DAILicenseService: the metadata of the installation's Driverless AI license, for every signed-in user. */
import type { Handlers } from '../call/handler.ts';
import { serviceHandlers } from '../call/service-impl.ts';
import { DAILicenseServiceService } from '../gen/ai/h2o/engine/v1/dai_license_service.pb.ts';
import { licenseMetadata } from '../license/dai-license.ts';
import type { LicenseSource } from '../license/license-source.ts';

export function daiLicenseService(license: LicenseSource | undefined): Handlers {
  return serviceHandlers(DAILicenseServiceService, {
    getDaiLicenseMetadata: async () => {
      const text = await license?.();
      // No license answers an empty message, which clients read as "none configured".
      return text === undefined || text.trim() === '' ? {} : { daiLicenseMetadata: licenseMetadata(text) };
    },
  });
}
