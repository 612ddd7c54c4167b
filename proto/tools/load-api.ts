import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readApi, type Api, type FileDescriptorSetJson } from './descriptor.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The protobuf package of the API. */
export const API_PACKAGE = 'ai.h2o.engine.v1';

/** Compiles proto/ with buf (offline, with comments) and returns the API it describes. */
export function loadApi(): Api {
  if (!existsSync(join(ROOT, '.gen-deps'))) {
    execFileSync('bash', [join(ROOT, 'scripts/proto-deps.sh')]);
  }
  const json = execFileSync(
    join(ROOT, 'node_modules/.bin/buf'),
    ['build', '--as-file-descriptor-set', '-o', '-#format=json'],
    {
      cwd: ROOT,
      maxBuffer: 256 * 1024 * 1024,
      encoding: 'utf8',
    },
  );
  return readApi(JSON.parse(json) as FileDescriptorSetJson, API_PACKAGE);
}
