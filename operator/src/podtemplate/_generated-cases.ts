/**
 * Test support: pseudo-random pod templates and patches for the differential test, from a
 * seed so every run checks the same cases. They mix merged and atomic lists, repeated and
 * missing merge keys, nulls, type changes and every directive, in combinations no one would
 * write by hand. A patch never both sets and deletes from the same scalar list: kubectl handles
 * that in random order.
 */
import type { DifferentialCase } from './_differential-cases.ts';
import type { JsonObject, JsonValue } from './json.ts';

const NAMES = ['a', 'b', 'c', 'd', 'e'];

/** A small deterministic generator (a linear congruential one), enough to vary cases. */
class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed;
  }

  next(): number {
    this.state = (this.state * 1103515245 + 12345) % 2147483648;
    return this.state / 2147483648;
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(values: readonly T[]): T {
    return values[Math.floor(this.next() * values.length)] as T;
  }

  some<T>(values: readonly T[], probability: number): T[] {
    return values.filter(() => this.chance(probability));
  }

  times<T>(max: number, make: () => T): T[] {
    return Array.from({ length: Math.floor(this.next() * (max + 1)) }, make);
  }
}

/** `count` cases from `seed`. */
export function generatedCases(seed: number, count: number): DifferentialCase[] {
  const random = new Random(seed);
  return Array.from({ length: count }, (_, index) => ({
    name: `generated case ${index} (seed ${seed})`,
    original: new Generator(random, false).template(),
    patch: new Generator(random, true).template(),
  }));
}

/** Builds templates; a patch also gets directives, nulls and broken elements. */
class Generator {
  private readonly random: Random;
  private readonly patch: boolean;

  constructor(random: Random, patch: boolean) {
    this.random = random;
    this.patch = patch;
  }

  /** Only in patches. */
  private sometimes(probability: number): boolean {
    return this.patch && this.random.chance(probability);
  }

  template(): JsonObject {
    const template: JsonObject = { spec: this.spec() };
    if (this.random.chance(0.4)) template['metadata'] = this.metadata();
    return template;
  }

  private spec(): JsonObject {
    const r = this.random;
    const spec: JsonObject = {};
    if (r.chance(0.8)) spec['containers'] = r.times(3, () => this.container());
    if (r.chance(0.3)) spec['initContainers'] = r.times(2, () => this.container());
    if (r.chance(0.4)) spec['volumes'] = r.times(3, () => this.volume());
    if (r.chance(0.3)) spec['tolerations'] = r.times(2, () => this.toleration());
    if (r.chance(0.3)) spec['nodeSelector'] = this.nodeSelector();
    if (r.chance(0.2)) spec['imagePullSecrets'] = r.times(3, () => ({ name: r.pick(NAMES) }));
    if (this.sometimes(0.2)) spec['$setElementOrder/containers'] = this.order();
    if (this.sometimes(0.05))
      spec[r.pick(['hostname', 'containers', 'volumes'])] = r.pick([null, 's', { a: 1 }, []]);
    return spec;
  }

  private metadata(): JsonObject {
    const r = this.random;
    const metadata: JsonObject = { labels: { [r.pick(NAMES)]: this.sometimes(0.3) ? null : 'v' } };
    if (this.sometimes(0.2)) metadata['$deleteFromPrimitiveList/finalizers'] = r.some(NAMES, 0.4);
    else metadata['finalizers'] = r.some(NAMES, 0.4);
    if (this.sometimes(0.3)) metadata['$setElementOrder/finalizers'] = r.some(NAMES, 0.5);
    return metadata;
  }

  private container(): JsonObject {
    const r = this.random;
    const container: JsonObject = r.chance(0.05) ? {} : { name: r.pick(NAMES) };
    if (r.chance(0.5)) container['image'] = r.pick(['i1', 'i2', this.patch ? null : 'i3']);
    if (r.chance(0.5)) container['env'] = r.times(3, () => this.envVar());
    if (this.sometimes(0.1)) container['$deleteFromPrimitiveList/args'] = [r.pick(['--a', '--c'])];
    else if (r.chance(0.3)) container['args'] = [r.pick(['--a', '--b']), r.pick(['--c', '--a'])];
    if (r.chance(0.3))
      container['ports'] = [{ containerPort: r.pick([80, 81]), protocol: r.pick(['TCP', 'UDP']) }];
    if (r.chance(0.3)) container['volumeMounts'] = [{ name: r.pick(NAMES), mountPath: r.pick(['/a', '/b']) }];
    return this.patch ? this.containerDirectives(container) : container;
  }

  private containerDirectives(container: JsonObject): JsonObject {
    const r = this.random;
    if (r.chance(0.15)) container['$setElementOrder/env'] = this.order();
    if (r.chance(0.05)) container['$retainKeys'] = ['name', 'env', 'image'];
    if (r.chance(0.1)) container['$patch'] = r.pick(['delete', 'replace']);
    if (r.chance(0.05)) container['resources'] = { limits: { cpu: null, memory: '1' } };
    return container;
  }

  private envVar(): JsonObject {
    const r = this.random;
    const variable: JsonObject = r.chance(0.05) ? {} : { name: r.pick(NAMES) };
    if (r.chance(0.6)) variable['value'] = r.pick(['1', '2']);
    if (this.sometimes(0.1)) variable['value'] = null;
    if (this.sometimes(0.15)) variable['$patch'] = r.pick(['delete', 'delete', 'replace', 'merge']);
    return variable;
  }

  private volume(): JsonObject {
    const r = this.random;
    const volume: JsonObject = { name: r.pick(NAMES), [r.pick(['emptyDir', 'secret', 'configMap'])]: {} };
    if (this.sometimes(0.2)) volume['$retainKeys'] = ['name', 'secret'];
    if (this.sometimes(0.1)) volume['$patch'] = 'delete';
    return volume;
  }

  private toleration(): JsonObject {
    const toleration: JsonObject = { key: this.random.pick(NAMES), operator: 'Exists' };
    if (this.sometimes(0.2)) toleration['$patch'] = 'delete';
    return toleration;
  }

  private nodeSelector(): JsonObject {
    const r = this.random;
    const selector: JsonObject = { [r.pick(NAMES)]: r.pick<JsonValue>(['x', 'y', this.patch ? null : 'z']) };
    if (this.sometimes(0.1)) selector['$patch'] = r.pick(['replace', 'delete']);
    return selector;
  }

  private order(): JsonValue[] {
    return this.random.some(NAMES, 0.5).map((name) => ({ name }));
  }
}
