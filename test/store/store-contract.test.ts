/**
 * The Store contract (store-contract.ts) on a real control plane: the Kubernetes store as the
 * gateway runs it, reading from its watch caches. The in-memory store runs the same suite in
 * gateway/src/store/memory-store.test.ts.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { ResourceStore } from '../../gateway/src/store/store.ts';
import { useCluster } from '../helpers/use-cluster.ts';
import { describeStoreContract } from './store-contract.ts';

const NAMESPACE = 'store-contract';
// The product's kinds from the cluster's start: a kind made moments before the store starts may
// have its watches ended by the apiserver as it settles the new kind, and the store then reads
// as catching up.
const cluster = useCluster({ crds: true });
let store: ResourceStore | undefined;

beforeAll(async () => {
  await cluster()
    .kubeConfig.makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: NAMESPACE } } });
  store = new ResourceStore(cluster().kubeConfig, NAMESPACE);
  await store.startCaches();
});

afterAll(async () => {
  await store?.stopCaches();
});

describeStoreContract('ResourceStore', () => {
  if (store === undefined) throw new Error('The store did not start');
  return store;
});
