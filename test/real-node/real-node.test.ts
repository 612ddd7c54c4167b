/**
 * Every test that needs the machine's one real node (a kubelet and containerd: one per machine),
 * in one file: the real-node cases, `make run` (which starts one) and `helm uninstall` with the
 * product running on it. As separate files they took turns on the node through a machine-wide
 * lock, and a Jest worker waiting for that lock runs nothing else: on two workers, half the run
 * often waited. Here they run one after another by construction, each case module a describe
 * block whose cluster starts before its tests and stops after them.
 */
import './node.cases.ts';
import './network-policy.cases.ts';
import './proxy-only.cases.ts';
import './engines.cases.ts';
import './access.cases.ts';
import './activity.cases.ts';
import '../charts/uninstall.cases.ts';
import '../run/make-run.cases.ts';
