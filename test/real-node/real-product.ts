/**
 * The product on a local cluster with a real node, as the real-node test files use it: the
 * gateway and operator under real tokens and the default policy, one simulated node beside the
 * real one, and the real-node catalogue (test/cluster/real-catalogue.ts) created as `admin`.
 */
import type { ClusterOptions } from '../cluster/cluster.ts';
import { createCatalogue, realCatalogue } from '../cluster/real-catalogue.ts';
import { useApiServer, type ApiServer } from '../helpers/api-server.ts';
import { useIdentity, type TestIdentity } from '../helpers/use-identity.ts';

/** The accounts: an administrator, and users with their own roles. */
type Account = Parameters<typeof useIdentity>[0]['accounts'][number];

/**
 * The cluster of the real-node cases: the real node and one simulated node beside it, on which
 * engines of the real-node catalogue must not land, with the product's CRDs.
 * real-node.test.ts shares one among them.
 */
export const REAL_NODE_CLUSTER: ClusterOptions = {
  realNode: true,
  nodes: { cpuNodes: 1, gpuNodes: 0, gpusPerNode: 0 },
  crds: true,
};

const ADMIN: Account = { id: 'admin', name: 'Ada Admin', roles: ['admin'] };

export function useRealNodeProduct(
  namespace: string,
  users: readonly Account[],
): { identity: () => TestIdentity; api: () => ApiServer } {
  const { identity, authenticate, authorizer } = useIdentity({ accounts: [ADMIN, ...users] });
  const api = useApiServer({
    namespace,
    authenticate,
    authorizer,
    operator: true,
    cluster: REAL_NODE_CLUSTER,
    // Browsers sign in at the file's identity provider.
    login: () => {
      const { provider } = identity();
      return {
        issuer: provider.issuer,
        clientId: provider.browserClientId,
        scopes: provider.browserScopes,
        allowRedirect: (uri) => {
          provider.allowRedirect(uri);
        },
      };
    },
  });
  beforeAll(async () => {
    const images = api().cluster.realNode?.images ?? [];
    await createCatalogue(api().gateway.restUrl, await identity().token('admin'), realCatalogue(images));
  }, 60_000);
  return { identity, api };
}
