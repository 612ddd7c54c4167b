import { readFileSync } from 'node:fs';
import { MalformedAnswer } from './activity-probe.ts';
import { h2oActivity, h2oActivityProbe } from './h2o-jobs.ts';

/** A captured answer of H2O-3 (see __fixtures__/README.md). */
const answer = (name: string): unknown =>
  JSON.parse(readFileSync(new URL(`./__fixtures__/h2o-jobs-${name}.json`, import.meta.url), 'utf8'));

const NOW = new Date('2026-11-27T23:00:00Z');

describe('h2oActivity()', () => {
  test('a job training is activity now', () => {
    expect(h2oActivity(answer('running'), NOW)).toEqual(NOW);
  });

  test('ended jobs: the latest end (start plus run time), a cancelled job included', () => {
    // The GBM started at 1795817427982 and ran 4876 ms before it was cancelled.
    expect(h2oActivity(answer('ended'), NOW)).toEqual(new Date(1795817427982 + 4876));
  });

  test('a cloud that has run no job shows no activity', () => {
    expect(h2oActivity(answer('none'), NOW)).toBeUndefined();
  });

  test('a job being cancelled still works until it stops; a job never started did nothing', () => {
    const job = (status: string, start: number, msec: number) => ({ status, start_time: start, msec });
    expect(h2oActivity({ jobs: [job('DONE', 1000, 5), job('CANCEL_PENDING', 2000, 10)] }, NOW)).toEqual(NOW);
    expect(h2oActivity({ jobs: [job('DONE', 1000, 5), job('CREATED', 0, 0)] }, NOW)).toEqual(new Date(1005));
  });

  test('answers that are not H2O’s fail the probe', () => {
    for (const bad of [
      [],
      {},
      { jobs: {} },
      { jobs: [{ status: 'DONE' }] },
      { jobs: [{ status: 'DONE', start_time: '1000', msec: 5 }] },
      { jobs: [{ start_time: 1000, msec: 5 }] },
      { jobs: [{ status: 'DONE', start_time: 1000, msec: -1 }] },
    ])
      expect(() => h2oActivity(bad, NOW)).toThrow(MalformedAnswer);
  });
});

describe('h2oActivityProbe', () => {
  test('asks for the cloud’s jobs', () => {
    expect(h2oActivityProbe.paths).toEqual(['/3/Jobs']);
    expect(h2oActivityProbe.latestActivity([answer('running')], NOW)).toEqual(NOW);
  });
});
