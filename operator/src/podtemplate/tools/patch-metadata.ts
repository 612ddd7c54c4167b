/**
 * `make generate`: writes operator/src/podtemplate/gen/patch-metadata.ts, the strategic merge
 * patch metadata of PodTemplateSpec and every type under it, from the OpenAPI v3 document that
 * the Kubernetes release the project builds publishes for /openapi/v3/api/v1.
 *
 * The document ships in the k8s.io/kubernetes Go module (api/openapi-spec/v3/), which
 * test/cluster/build-binaries.sh downloads to build the control plane; `go mod download` finds it
 * in the module cache without the network once it is there, so regeneration is reproducible
 * offline. Its x-kubernetes-patch-strategy and x-kubernetes-patch-merge-key extensions are
 * generated from the same k8s.io/api struct tags that kubectl reads, so the table cannot drift
 * from what kubectl does by hand-typing.
 *
 * Usage: node operator/src/podtemplate/tools/patch-metadata.ts [api__v1_openapi.json]
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
const OUTPUT = join(ROOT, 'operator/src/podtemplate/gen/patch-metadata.ts');
const SPEC_IN_MODULE = 'api/openapi-spec/v3/api__v1_openapi.json';
const ROOT_TYPES = ['io.k8s.api.core.v1.PodTemplateSpec'];
const REF_PREFIX = '#/components/schemas/';

/** Schemas that Kubernetes serialises as JSON scalars, though OpenAPI gives them names. */
const NAMED_SCALARS: Readonly<Record<string, string>> = {
  'io.k8s.apimachinery.pkg.api.resource.Quantity': 'quantity',
  'io.k8s.apimachinery.pkg.util.intstr.IntOrString': 'int-or-string',
  'io.k8s.apimachinery.pkg.apis.meta.v1.Time': 'string',
  'io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime': 'string',
};

interface OpenApiSchema {
  type?: string;
  $ref?: string;
  allOf?: OpenApiSchema[];
  items?: OpenApiSchema;
  additionalProperties?: OpenApiSchema | boolean;
  properties?: Record<string, OpenApiSchema>;
  'x-kubernetes-patch-strategy'?: string;
  'x-kubernetes-patch-merge-key'?: string;
}

interface OpenApiDocument {
  components: { schemas: Record<string, OpenApiSchema> };
}

/** One generated field: its type expression and, when Kubernetes declares them, its patch metadata. */
interface GeneratedField {
  type: string;
  patchStrategy?: string;
  patchMergeKey?: string;
}

/** The Kubernetes release build-binaries.sh builds, so the table follows the project's kubectl. */
function kubernetesVersion(): string {
  const script = readFileSync(join(ROOT, 'test/cluster/build-binaries.sh'), 'utf8');
  const match = /^K8S_VERSION=\$\{K8S_VERSION:-([0-9.]+)\}$/m.exec(script);
  if (!match?.[1]) throw new Error('Cannot find K8S_VERSION in test/cluster/build-binaries.sh');
  return match[1];
}

function specPath(version: string): string {
  const json = execFileSync('go', ['mod', 'download', '-json', `k8s.io/kubernetes@v${version}`], {
    encoding: 'utf8',
    env: { ...process.env, GOFLAGS: '-mod=mod' },
  });
  const { Dir: dir } = JSON.parse(json) as { Dir?: string };
  if (dir === undefined)
    throw new Error(`go mod download did not report where k8s.io/kubernetes@v${version} is`);
  return join(dir, SPEC_IN_MODULE);
}

function refName(schema: OpenApiSchema): string | undefined {
  const ref = schema.$ref ?? schema.allOf?.[0]?.$ref;
  return ref?.startsWith(REF_PREFIX) ? ref.slice(REF_PREFIX.length) : undefined;
}

/** Short names keep the table readable; a collision would be ambiguous, so it stops generation. */
function shortName(name: string): string {
  return name.slice(name.lastIndexOf('.') + 1);
}

class TableBuilder {
  readonly structs = new Map<string, Map<string, GeneratedField>>();
  private readonly longNames = new Map<string, string>();
  private readonly schemas: Record<string, OpenApiSchema>;

  constructor(document: OpenApiDocument) {
    this.schemas = document.components.schemas;
  }

  /** The type expression of a schema: a struct name, `[]T`, `map[string]T` or a scalar. */
  typeOf(schema: OpenApiSchema): string {
    const ref = refName(schema);
    if (ref !== undefined) return this.named(ref);
    if (schema.type === 'array' && schema.items) return `[]${this.typeOf(schema.items)}`;
    if (schema.type === 'object' && typeof schema.additionalProperties === 'object') {
      return `map[string]${this.typeOf(schema.additionalProperties)}`;
    }
    if (schema.type === 'string' || schema.type === 'integer' || schema.type === 'number') return schema.type;
    if (schema.type === 'boolean') return 'boolean';
    throw new Error(`Cannot type schema ${JSON.stringify(schema)}`);
  }

  named(name: string): string {
    const scalar = NAMED_SCALARS[name];
    if (scalar !== undefined) return scalar;
    const short = shortName(name);
    const known = this.longNames.get(short);
    if (known !== undefined && known !== name)
      throw new Error(`Both ${known} and ${name} are named ${short}`);
    if (known === undefined) {
      this.longNames.set(short, name);
      this.addStruct(short, name);
    }
    return short;
  }

  private addStruct(short: string, name: string): void {
    const schema = this.schemas[name];
    if (schema === undefined) throw new Error(`The document has no schema ${name}`);
    if (schema.type !== 'object') throw new Error(`${name} is not an object`);
    const fields = new Map<string, GeneratedField>();
    this.structs.set(short, fields);
    for (const [key, property] of Object.entries(schema.properties ?? {})) {
      const field: GeneratedField = { type: this.typeOf(property) };
      const strategy = property['x-kubernetes-patch-strategy'];
      const mergeKey = property['x-kubernetes-patch-merge-key'];
      if (strategy !== undefined) field.patchStrategy = checkedStrategy(name, key, strategy);
      if (mergeKey !== undefined) field.patchMergeKey = mergeKey;
      fields.set(key, field);
    }
  }
}

/** Only the strategies the merge implements: merge or replace, each optionally with retainKeys. */
function checkedStrategy(struct: string, field: string, strategy: string): string {
  const parts = strategy.split(',');
  const others = parts.filter((part) => part !== 'retainKeys');
  const known = others.every((part) => part === 'merge' || part === 'replace');
  if (parts.length > 2 || others.length > 1 || !known) {
    throw new Error(
      `${struct}.${field} has the patch strategy "${strategy}", which the merge does not implement`,
    );
  }
  return strategy;
}

function fieldSource(key: string, field: GeneratedField): string {
  const parts = [`type: '${field.type}'`];
  if (field.patchStrategy !== undefined) parts.push(`patchStrategy: '${field.patchStrategy}'`);
  if (field.patchMergeKey !== undefined) parts.push(`patchMergeKey: '${field.patchMergeKey}'`);
  const name = /^[A-Za-z_$][\w$]*$/.test(key) ? key : `'${key}'`;
  return `    ${name}: { ${parts.join(', ')} },`;
}

function source(builder: TableBuilder, version: string): string {
  const lines = [
    `// Code generated by operator/src/podtemplate/tools/patch-metadata.ts from the OpenAPI v3 document of`,
    `// Kubernetes v${version} (k8s.io/kubernetes@v${version}/${SPEC_IN_MODULE}). DO NOT EDIT.`,
    '',
    `import type { FieldMetadata } from '../patch-schema.ts';`,
    '',
    '/** The Kubernetes release whose patch metadata this is. */',
    `export const KUBERNETES_VERSION = 'v${version}';`,
    '',
    '/**',
    ' * Every type under PodTemplateSpec, by short name, with its fields: the type expression (a',
    " * name below, `[]T`, `map[string]T` or a scalar) and the field's x-kubernetes-patch-strategy",
    ' * and x-kubernetes-patch-merge-key.',
    ' */',
    'export const PATCH_METADATA = {',
  ];
  for (const name of [...builder.structs.keys()].sort()) {
    lines.push(`  ${name}: {`);
    for (const [key, field] of builder.structs.get(name) ?? []) lines.push(fieldSource(key, field));
    lines.push('  },');
  }
  lines.push('} as const satisfies Readonly<Record<string, Readonly<Record<string, FieldMetadata>>>>;', '');
  return lines.join('\n');
}

const version = kubernetesVersion();
const document = JSON.parse(readFileSync(process.argv[2] ?? specPath(version), 'utf8')) as OpenApiDocument;
const builder = new TableBuilder(document);
for (const name of ROOT_TYPES) builder.named(name);
mkdirSync(dirname(OUTPUT), { recursive: true });
writeFileSync(OUTPUT, source(builder, version));
