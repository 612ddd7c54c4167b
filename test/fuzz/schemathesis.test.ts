/**
 * Schema-driven fuzzing of the REST API: schemathesis generates requests for every operation of
 * the published OpenAPI document, valid and invalid ones, sends them to a gateway on a real
 * control plane with an administrator's token, and checks every answer: never a server error
 * (5xx), and each one as the document describes it. A catalogue of profiles, versions, images and
 * engines exists beforehand, so that many calls find what they name and go past "not found".
 *
 * Seeds as for the other property tests (test/helpers/property-seed.ts): a new one on every local
 * run, which a failure prints; AIEM_PROPERTY_SEED=<n> (CI sets one) makes the same requests again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineCatalogue, engineBodies, ok, profile } from '../auth/catalogue.ts';
import { useApiServer } from '../helpers/api-server.ts';
import { useIdentity } from '../helpers/use-identity.ts';
import {
  operationCount,
  runSchemathesis,
  SERVER_ERROR,
  type Fixtures,
  type RunReport,
} from './schemathesis.ts';

const DOCUMENT = join(
  resolve(dirname(fileURLToPath(import.meta.url)), '..', '..'),
  'docs-site/static/openapi/engine-manager.swagger.json',
);
const W = 'fuzz';
// Examples per operation and phase: about a minute of requests on two cores.
const MAX_EXAMPLES = 25;
const RUN_TIMEOUT_MS = 4 * 60 * 1000;

const { identity, authenticate, authorizer } = useIdentity({
  accounts: [{ id: 'admin', name: 'Ada Admin', roles: ['admin'] }],
});
const api = useApiServer({ namespace: 'fuzz-test', authenticate, authorizer });

const ENGINES = ['daiEngine', 'h2oEngine', 'notebookEngine'] as const;
const FIXTURES: Fixtures = {
  workspace: W,
  ids: {
    daiEngineProfile: ['standard'],
    h2oEngineProfile: ['standard'],
    notebookEngineProfile: ['standard'],
    daiEngineVersion: ['1.10.6', '1.11.0'],
    h2oEngineVersion: ['3.46.0.1'],
    notebookEngineImage: ['jupyter'],
    ...Object.fromEntries(ENGINES.map((engine) => [engine, ['engine']])),
  },
  spare: {
    daiEngineProfile: ['spare'],
    h2oEngineProfile: ['spare'],
    notebookEngineProfile: ['spare'],
    daiEngineVersion: ['0.0.1'],
    h2oEngineVersion: ['0.0.1'],
    notebookEngineImage: ['spare'],
    ...Object.fromEntries(ENGINES.map((engine) => [engine, ['spare']])),
  },
};

/** The catalogue of test/auth/catalogue.ts, an engine of each kind, and spares for deletes. */
async function defineFixtures(headers: Record<string, string>): Promise<void> {
  await defineCatalogue(api(), { workspace: W, headers });
  const post = (collection: string, id: string, body: unknown): Promise<Record<string, unknown>> =>
    ok(api(), {
      method: 'POST',
      path: `/v1/workspaces/${W}/${collection}?${collection.replace(/s$/, '')}Id=${id}`,
      body,
      headers,
    });
  for (const collection of ['daiEngineProfiles', 'h2oEngineProfiles', 'notebookEngineProfiles'])
    await post(collection, 'spare', profile());
  await post('daiEngineVersions', '0.0.1', { image: 'dai:0.0.1' });
  await post('h2oEngineVersions', '0.0.1', { image: 'h2o:0.0.1' });
  await post('notebookEngineImages', 'spare', { image: 'jupyter:0', enabled: true });
  const bodies = engineBodies(W);
  for (const id of ['engine', 'spare']) {
    await post('daiEngines', id, bodies.dai);
    await post('h2oEngines', id, bodies.h2o);
    await post('notebookEngines', id, bodies.notebook);
  }
}

/** AIEM_PROPERTY_SEED as a number; undefined lets schemathesis choose (its report names it). */
function chosenSeed(): number | undefined {
  const chosen = process.env['AIEM_PROPERTY_SEED'];
  return chosen === undefined || chosen === '' || chosen === 'random' ? undefined : Number(chosen);
}

let folder: string | undefined;
afterAll(() => {
  // Kept for a look when the test failed: schemathesis' configuration and report.
  if (folder !== undefined && (globalThis.__failedTests ?? 0) === 0)
    rmSync(folder, { recursive: true, force: true });
});

test(
  'schemathesis finds no server error and no departure from the document in any operation',
  async () => {
    const headers = await identity().headers('admin');
    await defineFixtures(headers);
    folder = mkdtempSync(join(tmpdir(), 'aiem-schemathesis-'));
    const { report, output } = await runSchemathesis({
      document: DOCUMENT,
      baseUrl: api().gateway.restUrl,
      token: await identity().token('admin'),
      fixtures: FIXTURES,
      folder,
      maxExamples: MAX_EXAMPLES,
      seed: chosenSeed(),
      timeoutMs: RUN_TIMEOUT_MS,
    });
    if (report.failures.length > 0 || report.errors.length > 0)
      console.error(`schemathesis (seed ${report.seed}, files in ${folder}):\n${output}`);
    expect(failures(report, (code) => code === SERVER_ERROR)).toEqual([]);
    expect(failures(report, (code) => code !== SERVER_ERROR)).toEqual([]);
    expect(report.errors).toEqual([]);
    // Every operation of the document was tested, so that the run cannot pass by testing nothing.
    const operations = operationCount(DOCUMENT);
    expect(operations).toBeGreaterThan(60);
    expect(report.operations).toMatchObject({
      total: operations,
      selected: operations,
      tested: operations,
      errored: 0,
    });
    expect(report.complete).toBe(true);
    // And the catalogue did its part: most operations had requests that the gateway carried out.
    const accepted = Object.values(report.valid_rates).filter((phases) =>
      Object.values(phases).some((rate) => rate.accepted > 0),
    );
    expect(accepted.length).toBeGreaterThan(operations / 2);
  },
  RUN_TIMEOUT_MS + 60_000,
);

/** `code title: operations` for each kind of failure that `pick` selects. */
function failures(report: RunReport, pick: (code: string) => boolean): string[] {
  return report.failures
    .filter((f) => pick(f.code))
    .map((f) => `${f.code} ${f.title} (${f.count}): ${f.operations.join(', ')}`);
}
