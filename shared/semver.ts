/**
 * Order of engine versions such as `1.10.6`, `1.10.6.1` and `1.10.6-alpha`: numeric segments
 * compared as numbers (any count; a missing segment counts as 0), and a pre-release below its
 * release, pre-release identifiers compared as semver 2.0 does; build metadata (`+…`) is
 * ignored. It is a total order over every string: a segment that is not a number (a notebook
 * image id such as `jupyter-python`, a typo in a filter) sorts after the numbers, as text.
 */
export function compareVersions(a: string, b: string): number {
  const [coreA, preA] = splitOnce(withoutBuild(a));
  const [coreB, preB] = splitOnce(withoutBuild(b));
  const core = compareCore(coreA.split('.'), coreB.split('.'));
  if (core !== 0) return core;
  if (preA === undefined || preB === undefined)
    return (preA === undefined ? 1 : 0) - (preB === undefined ? 1 : 0);
  return comparePreRelease(preA.split('.'), preB.split('.'));
}

function splitOnce(version: string): [string, string | undefined] {
  const dash = version.indexOf('-');
  return dash < 0 ? [version, undefined] : [version.slice(0, dash), version.slice(dash + 1)];
}

function withoutBuild(version: string): string {
  const plus = version.indexOf('+');
  return plus < 0 ? version : version.slice(0, plus);
}

function compareCore(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const diff = compareIdentifier(a[i] ?? '0', b[i] ?? '0');
    if (diff !== 0) return diff;
  }
  return 0;
}

function comparePreRelease(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const diff = compareIdentifier(a[i] ?? '', b[i] ?? '');
    if (diff !== 0) return diff;
  }
  return a.length - b.length;
}

/** Numeric identifiers compare as numbers and below alphanumeric ones (semver 2.0, 11.4). */
function compareIdentifier(a: string, b: string): number {
  const numA = /^[0-9]+$/.test(a);
  const numB = /^[0-9]+$/.test(b);
  if (numA && numB) return compareBig(BigInt(a), BigInt(b));
  if (numA !== numB) return numA ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareBig(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
