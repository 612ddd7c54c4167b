/**
 * Property-based tests (fast-check) explore new inputs on every local run, and CI runs them
 * from one fixed seed (`.ci/run` sets AIEM_PROPERTY_SEED), so that a red CI run is the same run
 * again anywhere. A failure prints its seed; `AIEM_PROPERTY_SEED=<n> make test` replays it.
 */
import fc from 'fast-check';

const chosen = process.env['AIEM_PROPERTY_SEED'];
if (chosen !== undefined && chosen !== '' && chosen !== 'random') {
  fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: Number(chosen) });
}
