/**
 * Running schemathesis (installed by `make schemathesis`) over the published OpenAPI document:
 * its configuration, its command line and its JSON report.
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const CACHE = process.env['AIEM_CACHE'] ?? join(homedir(), '.cache', 'ai-engine-manager');
// The Makefile reads the version from test/fuzz/requirements.txt and exports it.
const VERSION = process.env['SCHEMATHESIS_VERSION'] ?? '4.32.5';
export const SCHEMATHESIS = join(CACHE, `schemathesis-${VERSION}`, 'bin', 'schemathesis');

/** The failure code of the not_a_server_error check: a 5xx answer. */
export const SERVER_ERROR = 'ST101';

/** The ids that exist before the run, by path parameter name; DELETE calls get `spare` ones. */
export interface Fixtures {
  workspace: string;
  /** Path parameter name (e.g. `daiEngineVersion`) to ids of existing resources. */
  ids: Record<string, readonly string[]>;
  /** Path parameter name to ids that DELETE calls may remove. */
  spare: Record<string, readonly string[]>;
}

/** The part of schemathesis' JSON report (`--report json`) that the test reads. */
export interface RunReport {
  seed: number;
  complete: boolean;
  running_time: number;
  operations: { total: number; selected: number; tested: number; errored: number };
  test_cases: { generated: number; with_failures: number; errored: number };
  /** One entry per kind of failure, with the operations where it was seen. */
  failures: { code: string; title: string; count: number; operations: string[] }[];
  errors: unknown[];
  valid_rates: Record<string, Record<string, { accepted: number }>>;
}

const toml = (value: string): string => JSON.stringify(value);

/** `{ "path.name" = { dictionary = "…", probability = … }, … }` for each parameter of `ids`. */
function bindings(ids: Record<string, readonly string[]>, prefix: string, probability: number): string[] {
  return Object.keys(ids).map(
    (name) =>
      `${toml(`path.${name}`)} = { dictionary = ${toml(prefix + name)}, probability = ${probability} }`,
  );
}

function dictionaries(ids: Record<string, readonly string[]>, prefix: string): string[] {
  return Object.entries(ids).map(
    ([name, values]) => `${toml(prefix + name)} = { values = [${values.map(toml).join(', ')}] }`,
  );
}

/**
 * The schemathesis.toml of a run. Path parameters take the ids of existing resources most of the
 * time, so that calls get past "not found" to the gateway's real work; the rest of the time, and
 * for every other field, schemathesis generates values from the document.
 */
export function configToml({ workspace, ids, spare }: Fixtures): string {
  return [
    // Real tokens; the variable is set by the test for the schemathesis process only.
    'headers = { Authorization = "Bearer ${AIEM_FUZZ_TOKEN}" }',
    '',
    ...checks('checks', CHECKS),
    ...checks('phases.fuzzing.checks', CHECKS),
    // Whether schema-violating requests are refused, in the coverage phase only: its requests are
    // the same on every run, each breaking one rule of the document. Random ones also send null
    // for fields, which proto3 JSON (and the gateway) reads as "unset", so a null where the field
    // may be left unset is rightly accepted, though the document shows no null.
    ...checks('phases.coverage.checks', [...CHECKS, 'negative_data_rejection']),
    '[dictionaries]',
    `workspace = { values = [${toml(workspace)}] }`,
    ...dictionaries(ids, 'id-'),
    ...dictionaries(spare, 'spare-'),
    '',
    '[parameters]',
    '"path.workspace" = { dictionary = "workspace", probability = 0.8 }',
    ...bindings(ids, 'id-', 0.7),
    '',
    // Deletes remove only the spare resources, never the ones the other calls need; nor do they
    // take ids seen in earlier answers (schemathesis' own pool of them).
    '[[operations]]',
    'include-method = "DELETE"',
    'phases.coverage.extra-data-sources.responses = false',
    'phases.fuzzing.extra-data-sources.responses = false',
    `parameters = { ${bindings(spare, 'spare-', 0.7).join(', ')} }`,
    '',
  ].join('\n');
}

/**
 * The checks that hold of the gateway and the document. Not positive_data_acceptance: the
 * document cannot say that, e.g., a profile's default must lie between its min and max, so
 * schema-valid requests are often refused, rightly. Not the stateful ones: no stateful phase.
 */
const CHECKS = [
  'not_a_server_error',
  'status_code_conformance',
  'content_type_conformance',
  'response_headers_conformance',
  'response_schema_conformance',
  'missing_required_header',
  'unsupported_method',
  'allow_header_conformance',
];

/** A table that enables exactly `names` (a phase's own table replaces the global one). */
function checks(table: string, names: readonly string[]): string[] {
  return [`[${table}]`, 'enabled = false', ...names.map((name) => `${name}.enabled = true`), ''];
}

/** Options of {@link runSchemathesis}. */
export interface RunOptions {
  document: string;
  baseUrl: string;
  token: string;
  fixtures: Fixtures;
  /** A folder of the run's own: configuration, report and Hypothesis' files go there. */
  folder: string;
  maxExamples: number;
  /** Undefined: schemathesis picks one (and reports it). */
  seed: number | undefined;
  timeoutMs: number;
}

/** Runs schemathesis over every operation of the document; the report and the console output. */
export async function runSchemathesis(options: RunOptions): Promise<{ report: RunReport; output: string }> {
  const { folder, seed } = options;
  const config = join(folder, 'schemathesis.toml');
  const reportPath = join(folder, 'report.json');
  writeFileSync(config, configToml(options.fixtures));
  const args = [
    '--config-file',
    config,
    'run',
    options.document,
    '--url',
    options.baseUrl,
    // The stateful phase follows OpenAPI links, which a Swagger 2 document has none of.
    '--phases',
    'examples,coverage,fuzzing',
    '--max-examples',
    String(options.maxExamples),
    // One worker: with two, its threads parse Python source at once (hypothesis describing its
    // filters), which CPython before 3.11.8 can fail with "AST constructor recursion depth
    // mismatch" (python/cpython#106905); this machine's Python is 3.11.7.
    '--workers',
    '1',
    '--generation-database',
    'none',
    '--report',
    'json',
    '--report-json-path',
    reportPath,
    '--no-color',
    // Test tokens only: show requests as sent, so that a failure can be replayed.
    '--output-sanitize',
    'false',
    ...(seed === undefined ? [] : ['--seed', String(seed)]),
  ];
  const result = await promisify(execFile)(SCHEMATHESIS, args, {
    cwd: folder,
    env: { ...process.env, AIEM_FUZZ_TOKEN: options.token },
    timeout: options.timeoutMs,
    maxBuffer: 64 * 1024 * 1024,
  }).catch((error: unknown) => {
    // Exit code 1 means failures were found; the report tells which. Anything else is reported.
    const field = (name: string): string =>
      typeof error === 'object' && error !== null && name in error
        ? String((error as Record<string, unknown>)[name])
        : '';
    if (field('code') === '1') return { stdout: field('stdout'), stderr: field('stderr') };
    throw new Error(`schemathesis did not run: ${String(error)}\n${field('stdout')}\n${field('stderr')}`);
  });
  const report = JSON.parse(readFileSync(reportPath, 'utf8')) as RunReport;
  return { report, output: `${result.stdout}\n${result.stderr}` };
}

/** The number of operations (path and method pairs) of a Swagger 2 document. */
export function operationCount(document: string): number {
  const { paths } = JSON.parse(readFileSync(document, 'utf8')) as { paths: Record<string, object> };
  return Object.values(paths).reduce((sum, methods) => sum + Object.keys(methods).length, 0);
}
