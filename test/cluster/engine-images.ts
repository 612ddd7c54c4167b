import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runBuildScript } from './script-output.ts';

/** The kinds of engine that run from an image of their own on a real node. */
export type EngineImageKind = 'h2o' | 'notebook' | 'sandbox';

/** An engine image as image/engines/build.sh leaves it in the machine's cache. */
export interface EngineImage {
  kind: EngineImageKind;
  /** The image's name, e.g. `localhost/ai-engine-manager/h2o-engine:3.46.0.12`; pods use it with `imagePullPolicy: Never`. */
  ref: string;
  /**
   * The OCI archive (`podman save --format oci-archive`), named by a hash of everything in it. Its
   * index names the image with the full `ref` (`org.opencontainers.image.ref.name`), so
   * `ctr -n k8s.io images import <archive>` stores it under `ref`, as does `podman load`.
   */
  archive: string;
}

const BUILD_SCRIPT = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'image',
  'engines',
  'build.sh',
);
const KINDS: readonly EngineImageKind[] = ['h2o', 'notebook', 'sandbox'];

/**
 * Builds any engine image whose archive is missing (about a minute each on 2 cores, once per
 * machine and content) and returns all of them. A warm call only hashes the script's inputs.
 */
export async function ensureEngineImages(): Promise<readonly EngineImage[]> {
  const get = await runBuildScript(BUILD_SCRIPT, KINDS, 30 * 60 * 1000);
  return KINDS.map((kind) => {
    const prefix = kind.toUpperCase();
    return { kind, ref: get(`${prefix}_IMAGE_REF`), archive: get(`${prefix}_IMAGE_ARCHIVE`) };
  });
}
