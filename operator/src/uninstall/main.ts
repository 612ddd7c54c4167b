/**
 * The uninstall hook's process: the chart runs it from the product's image as a Helm hook Job
 * when the release is uninstalled (templates/uninstall/hook.yaml), to delete the release
 * namespace's engines (`AIEM_UNINSTALL_ENGINES=delete`, before the operator goes) or to release
 * them to Kubernetes (`keep`, after it went); see engines.ts. It exits 0 when done, or 1 with
 * the reason in its log and its termination message, which makes the Job, and so `helm
 * uninstall`, fail.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { pooled } from '../../../shared/kube-transport.ts';
import { deleteEngines, releaseEngines, UninstallIncomplete, type UninstallOptions } from './engines.ts';
import { kubeUninstallPort } from './kube.ts';

/** Where the kubelet reads a container's termination message (`kubectl describe pod` shows it). */
const TERMINATION_LOG = '/dev/termination-log';
const INTERVAL_MS = 2_000;

const env = (name: string, fallback: string): string => process.env[name] ?? fallback;
const log = pino({ level: env('AIEM_LOG_LEVEL', 'info'), base: { component: 'uninstall' } });

async function main(): Promise<void> {
  const mode = env('AIEM_UNINSTALL_ENGINES', 'keep');
  if (mode !== 'delete' && mode !== 'keep')
    throw new UninstallIncomplete(
      `Cannot uninstall: AIEM_UNINSTALL_ENGINES must be "delete" or "keep", not "${mode}"`,
    );
  const timeoutSeconds = Number(env('AIEM_UNINSTALL_TIMEOUT_SECONDS', '240'));
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1)
    throw new UninstallIncomplete(
      `Cannot uninstall: AIEM_UNINSTALL_TIMEOUT_SECONDS must be a whole number of seconds, not "${String(timeoutSeconds)}"`,
    );
  const namespace = env('AIEM_NAMESPACE', 'ai-engine-manager');
  const operatorSelector = env('AIEM_OPERATOR_POD_SELECTOR', 'app.kubernetes.io/component=operator');
  const kubeConfig = pooled(new KubeConfig());
  kubeConfig.loadFromDefault();
  const options: UninstallOptions = {
    namespace,
    timeoutMs: timeoutSeconds * 1000,
    intervalMs: INTERVAL_MS,
    operatorSelector,
    clock: { now: () => Date.now(), sleep: (ms) => sleep(ms) },
    log,
  };
  const port = kubeUninstallPort(kubeConfig, namespace, operatorSelector);
  log.info({ namespace, engines: mode, timeoutSeconds }, 'Started uninstall');
  if (mode === 'delete') await deleteEngines(port, options);
  else await releaseEngines(port, options);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    const message =
      error instanceof UninstallIncomplete ? error.message : `Cannot uninstall: ${String(error)}`;
    log.error({ err: error instanceof UninstallIncomplete ? undefined : error }, message);
    if (existsSync(TERMINATION_LOG)) writeFileSync(TERMINATION_LOG, message);
    process.exit(1);
  },
);
