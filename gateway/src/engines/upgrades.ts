/**
 * Whether a newer DAI version is available to an engine: a version that is not deprecated, in
 * the engine's workspace or in `workspaces/global` (where an engine may take its version from),
 * and newer than the engine's by version order. Pure.
 */
import { compareVersions } from '../../../shared/semver.ts';
import { idOf, workspaceOf } from '../../../shared/resource-name.ts';

export interface VersionSummary {
  name: string;
  deprecated?: boolean;
}

/** Numeric segments, then an optional pre-release: what version order can compare. */
const VERSION = /^\d+(\.\d+)*(-[0-9A-Za-z.-]+)?$/;

export function upgradeAvailable(
  engineName: string,
  versionName: string,
  versions: readonly VersionSummary[],
): boolean {
  const usable = new Set([workspaceOf(engineName), 'global']);
  const current = idOf(versionName);
  // An engine written around the API may name its version by an alias: no order to compare.
  if (!VERSION.test(current)) return false;
  return versions.some(
    (v) =>
      v.deprecated !== true &&
      usable.has(workspaceOf(v.name)) &&
      VERSION.test(idOf(v.name)) &&
      compareVersions(idOf(v.name), current) > 0,
  );
}
