/**
 * Every test that needs the machine's one real node (a kubelet and containerd: one per machine),
 * in one file: the real-node cases, `make run` (which starts one) and `helm uninstall` with the
 * product running on it. As separate files they took turns on the node through a machine-wide
 * lock, and a Jest worker waiting for that lock runs nothing else: on two workers, half the run
 * often waited. Here they run one after another by construction, each case module a describe
 * block.
 *
 * The node's own cases (which kill and restart their cluster), `helm uninstall` (whose chart
 * brings its own CRDs and cluster-wide webhooks) and `make run` (a cluster of its own, in another
 * process) each start their cluster; the imports declare them first. The other cases run on one
 * cluster they share, each in namespaces of its own that it leaves clean: a start and stop of a
 * cluster with a real node costs about 10 s.
 */
import './node.cases.ts';
import '../charts/uninstall.cases.ts';
import '../run/make-run.cases.ts';
import { shareCluster } from '../helpers/use-cluster.ts';
import { accessCases } from './access.cases.ts';
import { activityCases } from './activity.cases.ts';
import { enginesCases } from './engines.cases.ts';
import { networkPolicyCases } from './network-policy.cases.ts';
import { proxyOnlyCases } from './proxy-only.cases.ts';
import { REAL_NODE_CLUSTER } from './real-product.ts';

describe('one cluster with a real node', () => {
  shareCluster(REAL_NODE_CLUSTER, () => {
    networkPolicyCases();
    proxyOnlyCases();
    enginesCases();
    accessCases();
    activityCases();
  });
});
