import { MalformedAnswer } from '../activity/activity-probe.ts';
import { h2oCloudFormed } from './serving-check.ts';

/** The fields of H2O-3's `GET /3/Cloud` answer (CloudV3) that tell whether the cloud formed. */
const cloud = (size: number, consensus: boolean) => ({
  version: '3.46.0.12',
  cloud_name: 'h2o',
  cloud_size: size,
  cloud_healthy: true,
  consensus,
  locked: consensus && size > 1,
  nodes: [],
});

describe('h2oCloudFormed()', () => {
  test('a cloud of every node of the engine, whose nodes agree, is formed', () => {
    expect(h2oCloudFormed(cloud(2, true), 2)).toBe(true);
    expect(h2oCloudFormed(cloud(1, true), 1)).toBe(true);
  });

  test('a node leading a cloud of its own, before its peers merged, is not', () => {
    expect(h2oCloudFormed(cloud(1, true), 2)).toBe(false);
  });

  test('nodes that do not agree on the members yet are not', () => {
    expect(h2oCloudFormed(cloud(2, false), 2)).toBe(false);
  });

  test('an answer that is not H2O’s is malformed, not a verdict', () => {
    expect(() => h2oCloudFormed({ cloud_size: '2', consensus: true }, 2)).toThrow(MalformedAnswer);
    expect(() => h2oCloudFormed([], 2)).toThrow(MalformedAnswer);
    expect(() => h2oCloudFormed({ cloud_size: 2 }, 2)).toThrow(MalformedAnswer);
  });
});
