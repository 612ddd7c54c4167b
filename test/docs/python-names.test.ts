/**
 * Every Python name the documentation site states exists in the h2o-engine-manager releases the
 * site documents, with the signatures and members the pages show (see python-names.ts for the
 * pages' conventions). The releases are the venvs `make python-clients` installs.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { jest } from '@jest/globals';
import { pageClaims, type Claim } from './python-names.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const DOCS = resolve(HERE, '..', '..', 'docs-site', 'docs');
const CACHE = process.env['AIEM_CACHE'] ?? join(homedir(), '.cache', 'ai-engine-manager');
/** The documented release (docs-site/docs/py/installation) and the contract release, which has the same names. */
const RELEASES = ['1.10.2', '1.4.0'];

jest.setTimeout(60_000);

function pages(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return pages(path);
    return /\.mdx?$/.test(entry.name) ? [path] : [];
  });
}

async function problems(release: string, claims: readonly Claim[]): Promise<(Claim & { problem: string })[]> {
  const python = join(CACHE, `python-client-${release}`, 'bin', 'python');
  const child = promisify(execFile)(python, [join(HERE, 'python_names.py')], { maxBuffer: 64 * 1024 * 1024 });
  child.child.stdin?.end(JSON.stringify(claims));
  const { stdout } = await child;
  return JSON.parse(stdout) as (Claim & { problem: string })[];
}

const all = pages(DOCS).map((path) => pageClaims(relative(DOCS, path), readFileSync(path, 'utf8')));
const claims = all.flatMap((p) => p.claims);

test('the pages declare every call they mention, and give reference pages their module', () => {
  expect(all.flatMap((p) => p.problems)).toEqual([]);
});

test('the reference states names, signatures and members of the whole client', () => {
  const kinds = new Set(claims.map((c) => c.kind));
  expect([...kinds].sort()).toEqual(['enum', 'name', 'parameter', 'signature']);
  expect(claims.filter((c) => c.kind === 'signature').length).toBeGreaterThan(100);
});

test.each(RELEASES)(
  'every stated name exists in h2o-engine-manager %s as the pages show it',
  async (release) => {
    const found = await problems(release, claims);
    expect(found.map((p) => `${p.page}: ${p.problem}`)).toEqual([]);
  },
);

test('a name, parameter, member or signature the package does not have is reported', async () => {
  const page = [
    '---',
    'python_module: h2o_engine_manager.clients.dai_engine.dai_engine',
    'python_names: [h2o_engine_manager.clients.dai_engine.dai_engine.DAIEngine.hibernate]',
    '---',
    '```signature',
    'DAIEngine.pause(force: bool = False)',
    '```',
    '| Parameter | Meaning |',
    '| --- | --- |',
    '| `force` | stop at once |',
    '```signature',
    'enum DAIEngineState:',
    '    STATE_RUNNING',
    '```',
    'Call `engine.hibernate()` or `engine.explode()`.',
  ].join('\n');
  const { claims: stated, problems: local } = pageClaims('made-up.md', page);
  expect(local).toEqual([
    'made-up.md: `engine.explode()` is not declared in python_names or a signature block',
  ]);
  const found = await problems(RELEASES[0] ?? '', stated);
  expect(found.map((p) => p.kind).sort()).toEqual(['enum', 'name', 'parameter', 'signature']);
  expect(found.find((p) => p.kind === 'signature')?.problem).toContain('DAIEngine.pause()');
});
