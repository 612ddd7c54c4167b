import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
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
  const { stdout } = await promisify(execFile)(
    'bash',
    [BUILD_SCRIPT, binaries.pause, binaries.pauseVersion],
    {
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  const values = new Map(
    stdout
      .split('\n')
      .map((line) => line.split('='))
      .filter((parts): parts is [string, string] => parts.length === 2),
  );
  const get = (key: string): string => {
    const value = values.get(key);
    if (value === undefined) throw new Error(`build-node-images.sh did not report ${key}`);
    return value;
  };
  return {
    pause: { ref: get('PAUSE_IMAGE_REF'), archive: get('PAUSE_IMAGE_ARCHIVE') },
    helper: { ref: get('HELPER_IMAGE_REF'), archive: get('HELPER_IMAGE_ARCHIVE') },
  };
}
