/**
 * The chart tests' way to the real helm binary (built by test/cluster/build-binaries.sh): lint,
 * render with a set of values, install. Helm's own cache, configuration and data go to a
 * temporary folder per process, never to the user's home.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { KubernetesObject } from '@kubernetes/client-node';
import { loadAll } from 'js-yaml';
import { ensureBinaries } from '../cluster/binaries.ts';
import { restAt, type RestResponse } from '../helpers/api-server.ts';
import type { IdentityProvider } from '../identity/provider.ts';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CHART = join(ROOT, 'charts', 'ai-engine-manager');
/** The values every release needs (ci/minimal-values.yaml has the same). */
export const MINIMAL_VALUES = { oidc: { issuerUrl: 'https://issuer.example.com/realms/platform' } };

const home = mkdtempSync(join(tmpdir(), 'aiem-helm-'));
// Imported only by test files: the folder goes when the importing file's tests are done.
afterAll(() => {
  rmSync(home, { recursive: true, force: true });
});

/** A helm command that exited non-zero; `stderr` holds helm's message. */
export class HelmError extends Error {
  readonly stderr: string;
  constructor(args: readonly string[], stderr: string) {
    super(`helm ${args.join(' ')} failed: ${stderr}`);
    this.stderr = stderr;
  }
}

/** Runs helm; with `kubeconfig`, against that cluster. Resolves to its standard output. */
export async function helm(args: readonly string[], options: { kubeconfig?: string } = {}): Promise<string> {
  const binaries = await ensureBinaries();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'],
    HOME: home,
    HELM_CACHE_HOME: join(home, 'cache'),
    HELM_CONFIG_HOME: join(home, 'config'),
    HELM_DATA_HOME: join(home, 'data'),
    ...(options.kubeconfig === undefined ? {} : { KUBECONFIG: options.kubeconfig }),
  };
  try {
    const { stdout } = await promisify(execFile)(join(binaries.helm, 'helm'), [...args], {
      env,
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout;
  } catch (error: unknown) {
    const stderr = typeof error === 'object' && error !== null && 'stderr' in error ? String(error.stderr) : '';
    throw new HelmError(args, stderr || String(error));
  }
}

/** Writes values to a file for `-f` (JSON is YAML), so no `--set` escaping is involved. */
export function valuesFile(values: object): string {
  const path = join(mkdtempSync(join(home, 'values-')), 'values.json');
  writeFileSync(path, JSON.stringify(values));
  return path;
}

/** A rendered Kubernetes object, loosely typed for assertions. */
export type Rendered = KubernetesObject & Record<string, unknown>;

/** The objects parsed from a multi-document YAML stream (empty documents dropped). */
export function parseManifests(text: string): Rendered[] {
  return loadAll(text).filter((doc): doc is Rendered => typeof doc === 'object' && doc !== null);
}

/** Options of {@link render}. */
export interface RenderOptions {
  release?: string;
  namespace?: string;
}

/** `helm template` of the chart with these values; the rendered objects. */
export async function render(values: object, options: RenderOptions = {}): Promise<Rendered[]> {
  const stdout = await helm([
    'template',
    options.release ?? 'aiem',
    CHART,
    '--namespace',
    options.namespace ?? 'aiem-system',
    '-f',
    valuesFile(values),
  ]);
  return parseManifests(stdout);
}

/** The one object of `kind` whose name ends with `suffix`; throws when there is not exactly one. */
export function find(objects: readonly Rendered[], kind: string, suffix = ''): Rendered {
  const found = objects.filter((o) => o.kind === kind && (o.metadata?.name ?? '').endsWith(suffix));
  if (found.length !== 1) {
    const names = objects.filter((o) => o.kind === kind).map((o) => o.metadata?.name);
    throw new Error(`Expected one ${kind} named *${suffix}, found ${JSON.stringify(names)}`);
  }
  return found[0] as Rendered;
}

/** The chart's identity values for a test's identity provider: its issuer, audience and roles claim. */
export function oidcValues(provider: IdentityProvider): { oidc: object } {
  return { oidc: { issuerUrl: provider.issuer, audiences: [provider.audience], rolesClaim: provider.rolesClaim } };
}

/** REST calls to a gateway at `base` as the provider's account `admin`, with a fresh token each. */
export function adminRest(
  base: string,
  provider: IdentityProvider,
): (method: string, path: string, body?: unknown) => Promise<RestResponse> {
  return async (method, path, body) => {
    const headers = { Authorization: `Bearer ${await provider.accessToken('admin')}` };
    return restAt(base, { method, path, body, headers });
  };
}
