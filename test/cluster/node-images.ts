import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runBuildScript } from './script-output.ts';
import { ensureNodeBinaries } from './binaries.ts';

/** An image as an OCI archive, and the reference pods name it by. */
export interface ArchivedImage {
  ref: string;
  archive: string;
}

/** The real node's own images: the pod sandbox, and the volume provisioner's helper. */
export interface NodeImages {
  pause: ArchivedImage;
  helper: ArchivedImage;
}

const BUILD_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'build-node-images.sh');

/** Builds the node's images if missing (seconds, once per machine) and says where they are. */
export async function ensureNodeImages(): Promise<NodeImages> {
  const binaries = await ensureNodeBinaries();
  const get = await runBuildScript(BUILD_SCRIPT, [binaries.pause, binaries.pauseVersion]);
  return {
    pause: { ref: get('PAUSE_IMAGE_REF'), archive: get('PAUSE_IMAGE_ARCHIVE') },
    helper: { ref: get('HELPER_IMAGE_REF'), archive: get('HELPER_IMAGE_ARCHIVE') },
  };
}
