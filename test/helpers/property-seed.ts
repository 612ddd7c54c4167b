/**
 * Property-based tests (fast-check) run from one fixed seed, so that a red run is the same run
 * again on any machine. `AIEM_PROPERTY_SEED=random` explores new inputs (fast-check prints the
 * seed of any failure); `AIEM_PROPERTY_SEED=<n>` replays one.
 */
import fc from 'fast-check';

export const PROPERTY_SEED = 20261124;

const chosen = process.env['AIEM_PROPERTY_SEED'] ?? String(PROPERTY_SEED);
if (chosen !== 'random') fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: Number(chosen) });
