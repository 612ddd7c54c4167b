/**
 * NetworkPolicies on the real node. The bridge CNI enforces none, so kube-network-policies (built
 * by build-binaries.sh) judges connections instead: netfilter hands it the first packet of every
 * new pod-to-pod connection on a queue, and it accepts or drops the packet by the policies that
 * select either pod. Later packets of an accepted connection never leave the kernel.
 *
 * The kernel's nftables lacks the queue statement here, so the controller's own nftables rules
 * fail (it logs that and retries, harmlessly); an iptables chain of ours feeds the queue instead.
 * The sweep in node-host.ts removes the chain (`AIEM-` prefix) and the process (its binary folder).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ManagedProcess } from './process.ts';
import { GiveUp, waitFor } from './wait.ts';

const run = promisify(execFile);

/** The netfilter queue the agent reads; any number no other program on the machine binds. */
export const POLICY_QUEUE = 100;
/** Our chain in the filter table's FORWARD hook. */
export const POLICY_CHAIN = 'AIEM-NETWORK-POLICY';

/** What the agent needs from the node that starts it. */
export interface NetworkPolicyAgentOptions {
  /** The folder holding the kube-network-policies binary. */
  binaryDir: string;
  /** A kubeconfig that may list and watch pods, namespaces and NetworkPolicies, and write events. */
  kubeconfigPath: string;
  /** The node whose pods the agent protects. */
  nodeName: string;
  /** The pod network (CIDR): connections between two of its addresses are judged. */
  podSubnet: string;
  /** Starts a node component (its log, its pid record, its stop). */
  launch: (name: string, command: string, args: string[]) => ManagedProcess;
  log?: (message: string) => void;
}

/**
 * Starts the agent and resolves once connections between pods are judged by it: its caches have
 * synced (it binds the queue only then) and the chain that feeds the queue is in place.
 */
export async function startNetworkPolicyAgent(options: NetworkPolicyAgentOptions): Promise<ManagedProcess> {
  const started = Date.now();
  const agent = options.launch('network-policy-agent', join(options.binaryDir, 'kube-network-policies'), [
    `--kubeconfig=${options.kubeconfigPath}`,
    `--node-name=${options.nodeName}`,
    `--nfqueue-id=${POLICY_QUEUE}`,
    '--v=1',
  ]);
  await waitFor(
    () => {
      if (!agent.running()) throw new GiveUp('the network policy agent exited during start-up');
      return Promise.resolve(queueBound(POLICY_QUEUE) || undefined);
    },
    { what: `the network policy agent to bind netfilter queue ${POLICY_QUEUE}`, explain: () => agent.tail() },
  );
  // Only now: without a reader the queue drops every packet, so an earlier chain would cut pods
  // off from each other while the agent starts.
  await installChain(options.podSubnet);
  options.log?.(`real node: network policies enforced after ${Date.now() - started} ms`);
  return agent;
}

/**
 * Whether a program reads queue `queue`. The kernel lists bound queues, one a line, the queue
 * number first (`/proc/net/netfilter/nfnetlink_queue`).
 */
function queueBound(queue: number): boolean {
  let table: string;
  try {
    table = readFileSync('/proc/net/netfilter/nfnetlink_queue', 'utf8');
  } catch {
    return false;
  }
  return table.split('\n').some((line) => line.trim().split(/\s+/)[0] === String(queue));
}

async function iptables(args: readonly string[]): Promise<void> {
  // -w: kube-proxy rewrites its own chains at the same time and holds the lock meanwhile.
  await run('iptables', ['-w', '5', ...args]);
}

/**
 * The chain that sends the first packet of each new connection from a pod to a pod to the queue.
 *
 * - FORWARD sees exactly pod-to-pod traffic: bridged frames pass the IP hooks
 *   (bridge-nf-call-iptables), and a Service's address is already translated to a pod's there.
 *   Traffic from the host to a pod (kubelet probes, port-forwards, the gateway running as a host
 *   process) leaves through OUTPUT and is never queued: NetworkPolicies conventionally admit the
 *   node's own traffic, and the agent could not judge it anyway, since the host speaks from the
 *   bridge's address, which lies in the pod subnet but belongs to no pod.
 * - Only NEW connections: established and related packets, and invalid ones, go on to the rules
 *   after ours (kube-proxy drops invalid ones); a verdict lasts for the connection's lifetime.
 * - At the top of FORWARD, so that no rule accepts a new connection before it is judged.
 *   kube-proxy later puts its own jumps above ours; that is harmless, as they accept only
 *   established connections and a pod's connections to itself through its Service (which a
 *   policy cannot forbid), and otherwise only reject or drop. An accepted packet skips the
 *   filter rules below ours (podman's, for its own networks only).
 * - No --queue-bypass: while no agent reads the queue, new pod-to-pod connections are dropped
 *   (fail closed). With bypass an agent that died would silently admit everything every policy
 *   forbids. The chain goes in only after the agent reads the queue and the sweep takes it out,
 *   so a healthy node never drops a permitted connection for this.
 */
async function installChain(podSubnet: string): Promise<void> {
  await iptables(['-N', POLICY_CHAIN]);
  await iptables([
    '-A',
    POLICY_CHAIN,
    '-m',
    'conntrack',
    '--ctstate',
    'NEW',
    '-j',
    'NFQUEUE',
    '--queue-num',
    String(POLICY_QUEUE),
  ]);
  // Warning: the sweep deletes jumps into AIEM- chains by splitting `iptables -S` lines on
  // spaces, so this rule carries no comment (a comment with spaces would not split back).
  await iptables(['-I', 'FORWARD', '1', '-s', podSubnet, '-d', podSubnet, '-j', POLICY_CHAIN]);
}
