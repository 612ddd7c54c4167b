/**
 * The product's admission webhooks on the local control plane: a serving certificate for
 * loopback from the cluster's CA, and the chart's own webhook configurations (rendered by helm)
 * with the gateway reached at a loopback URL instead of its Service. `make run` and the tests
 * register them the same way.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { dump, loadAll } from 'js-yaml';
import type { Cluster } from './cluster.ts';
import { issueLoopbackCertificate } from './pki.ts';

const CHART = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'charts', 'ai-engine-manager');
const CONFIGURATIONS = ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'];

/** A serving certificate for the webhooks on 127.0.0.1, and the CA bundle that trusts it. */
export async function webhookCertificate(
  cluster: Cluster,
): Promise<{ certFile: string; keyFile: string; caBundle: string }> {
  const { cert, key } = await issueLoopbackCertificate(cluster.runDir, 'webhook');
  const caBundle = (await readFile(join(cluster.runDir, 'ca.crt'))).toString('base64');
  return { certFile: cert, keyFile: key, caBundle };
}

/** A rendered webhook configuration. */
export interface WebhookConfiguration {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  webhooks: { clientConfig: Record<string, unknown>; failurePolicy: string }[];
}

/**
 * The chart's webhook configurations for the release namespace `namespace`, calling `url`
 * (`https://127.0.0.1:<port>`) trusted by `caBundle`. `exemptUsers` are left alone, as the chart
 * leaves the gateway's and the operator's ServiceAccounts: locally they run as the cluster admin.
 */
export async function webhookConfigurations(
  cluster: Cluster,
  options: { namespace: string; url: string; caBundle: string; exemptUsers: string[] },
): Promise<WebhookConfiguration[]> {
  const values = {
    oidc: { issuerUrl: 'https://issuer.invalid' },
    admission: { exemptUsers: options.exemptUsers },
  };
  const { stdout } = await promisify(execFile)(
    join(cluster.binaries.helm, 'helm'),
    [
      'template',
      'aiem',
      CHART,
      '--namespace',
      options.namespace,
      '--show-only',
      'templates/gateway/admission.yaml',
      '--set-json',
      `oidc=${JSON.stringify(values.oidc)}`,
      '--set-json',
      `admission=${JSON.stringify(values.admission)}`,
    ],
    {
      env: {
        PATH: process.env['PATH'],
        HOME: cluster.runDir,
        HELM_CACHE_HOME: join(cluster.runDir, 'helm'),
        HELM_CONFIG_HOME: join(cluster.runDir, 'helm'),
        HELM_DATA_HOME: join(cluster.runDir, 'helm'),
      },
    },
  );
  const rendered = loadAll(stdout) as (WebhookConfiguration | null)[];
  return rendered
    .filter((o): o is WebhookConfiguration => o !== null && CONFIGURATIONS.includes(o.kind))
    .map((configuration) => {
      const mode = configuration.kind.startsWith('Mutating') ? 'mutate' : 'validate';
      const webhooks = configuration.webhooks.map((webhook) => ({
        ...webhook,
        clientConfig: { url: `${options.url}/admission/${mode}`, caBundle: options.caBundle },
      }));
      return { ...configuration, webhooks };
    });
}

/** Applies (or with `verb`, deletes) configurations on the cluster. */
export async function applyConfigurations(
  cluster: Cluster,
  configurations: readonly object[],
  verb: 'apply' | 'delete' = 'apply',
): Promise<void> {
  await cluster.kubectl([verb, '-f', '-'], configurations.map((c) => dump(c)).join('---\n'));
}
