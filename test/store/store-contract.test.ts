/**
 * The Store contract (store-contract.ts) on a real control plane: the Kubernetes store as the
 * gateway runs it, reading from its watch caches. The in-memory store runs the same suite in
 * gateway/src/store/memory-store.test.ts.
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api } from '@kubernetes/client-node';
import { ResourceStore } from '../../gateway/src/store/store.ts';
import { useCluster } from '../helpers/use-cluster.ts';
import { describeStoreContract } from './store-contract.ts';

const NAMESPACE = 'store-contract';
const CRDS = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'crds');
const cluster = useCluster();
let store: ResourceStore | undefined;

beforeAll(async () => {
  await cluster().kubectl(['apply', '-f', CRDS]);
  await cluster().kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
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
