/**
 * Where the Driverless AI license is kept: a key of a Secret in the installation's namespace,
 * read when asked (a rare call), so that a replaced license is answered at once.
 */
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { statusCode } from '../../../shared/watched-collection.ts';

/** The license text, or `undefined` when none is configured. */
export type LicenseSource = () => Promise<string | undefined>;

/** The key of the Secret that holds the license file, as Driverless AI names it. */
export const LICENSE_KEY = 'license.sig';

export function secretLicense(kubeConfig: KubeConfig, namespace: string, secret: string): LicenseSource {
  const api = kubeConfig.makeApiClient(CoreV1Api);
  return async () => {
    try {
      const found = await api.readNamespacedSecret({ name: secret, namespace });
      const data = found.data?.[LICENSE_KEY];
      return data === undefined ? undefined : Buffer.from(data, 'base64').toString('utf8');
    } catch (error: unknown) {
      // No Secret is no license; anything else is a fault the caller should see.
      if (statusCode(error) === 404) return undefined;
      throw error;
    }
  };
}
