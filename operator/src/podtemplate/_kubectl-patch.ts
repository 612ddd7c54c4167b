/**
 * Test support: applies strategic merge patches to pod templates with kubectl itself, the
 * reference the merge is tested against. `kubectl patch --local` needs no cluster; the template
 * travels inside a v1 PodTemplate, whose `template` field is a PodTemplateSpec, so kubectl uses
 * exactly the PodTemplateSpec metadata.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KUBERNETES_VERSION } from './gen/patch-metadata.ts';
import type { JsonObject } from './json.ts';

const run = promisify(execFile);

/** kubectl's answer: the patched template, or the error it printed. */
export type KubectlResult = { template: JsonObject } | { error: string };

export interface Kubectl {
  path: string;
  /** The client's gitVersion, e.g. v1.36.3. */
  version: string;
  patch(original: JsonObject, patch: JsonObject): Promise<KubectlResult>;
  /** The same with the patch in YAML, which kubectl reads as Kubernetes reads YAML. */
  patchYaml(original: JsonObject, patch: string): Promise<KubectlResult>;
  /** Removes the scratch folder. */
  close(): Promise<void>;
}

/**
 * The kubectl of the Kubernetes release the patch metadata comes from, where `make deps` builds
 * it (test/cluster/build-binaries.sh), else the one on PATH. Not ensureBinaries(): that builds
 * the whole control plane when anything is missing, minutes for a test that needs one binary;
 * `make test` builds them all before the tests run.
 */
export async function openKubectl(): Promise<Kubectl> {
  const cache = process.env['AIEM_CACHE'] ?? join(homedir(), '.cache', 'ai-engine-manager');
  const built = join(cache, 'bin', `kubernetes-${KUBERNETES_VERSION.slice(1)}`, 'kubectl');
  const path = existsSync(built) ? built : 'kubectl';
  const scratch = await mkdtemp(join(tmpdir(), 'smp-'));
  // --local still reads a kubeconfig; an absent one keeps the user's clusters out of the test.
  const env = { ...process.env, KUBECONFIG: join(scratch, 'no-kubeconfig') };
  const { stdout } = await run(path, ['version', '--client', '-o', 'json'], { env });
  const version = (JSON.parse(stdout) as { clientVersion: { gitVersion: string } }).clientVersion.gitVersion;
  let files = 0;
  const apply = async (original: JsonObject, patch: string): Promise<KubectlResult> => {
    const file = join(scratch, `template-${files++}.json`);
    // JSON, not YAML: kubectl reads YAML 1.1, where an unquoted y or no is a boolean.
    const object = {
      apiVersion: 'v1',
      kind: 'PodTemplate',
      metadata: { name: 'engine' },
      template: original,
    };
    await writeFile(file, JSON.stringify(object));
    const args = ['patch', '--local', '--type=strategic', '-o', 'json', '-f', file, '-p', patch];
    try {
      const { stdout } = await run(path, args, { env });
      return { template: (JSON.parse(stdout) as { template: JsonObject }).template };
    } catch (error: unknown) {
      return { error: (error as { stderr?: string }).stderr?.trim() ?? String(error) };
    }
  };
  return {
    path,
    version,
    patch: (original, patch) => apply(original, JSON.stringify({ template: patch })),
    patchYaml: (original, patch) => apply(original, `template:\n${patch.replace(/^/gm, '  ')}`),
    close: () => rm(scratch, { recursive: true, force: true }),
  };
}
