import { describe, expect, it } from '@jest/globals';
import { microTime } from './micro-time.ts';

describe('microTime', () => {
  it('goes out in JSON with the six fractional digits the apiserver needs', () => {
    const time = microTime(new Date('2026-11-28T01:02:03.456Z'));
    expect(JSON.stringify({ renewTime: time })).toBe('{"renewTime":"2026-11-28T01:02:03.456000Z"}');
    expect(time.getTime()).toBe(Date.parse('2026-11-28T01:02:03.456Z'));
  });
});
