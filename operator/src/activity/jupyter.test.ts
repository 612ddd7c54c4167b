import { readFileSync } from 'node:fs';
import { MalformedAnswer } from './activity-probe.ts';
import { jupyterActivity, jupyterActivityProbe } from './jupyter.ts';

/** A captured answer of Jupyter Server (see __fixtures__/README.md). */
const answer = (name: string): unknown =>
  JSON.parse(readFileSync(new URL(`./__fixtures__/jupyter-${name}.json`, import.meta.url), 'utf8'));

const NOW = new Date('2026-11-27T23:00:00Z');

describe('jupyterActivity()', () => {
  test('a kernel running a cell is activity now, whatever its last_activity says', () => {
    // Jupyter's last_activity stays at the cell's start while it runs.
    expect(answer('kernels-busy')).toEqual([
      expect.objectContaining({ execution_state: 'busy', last_activity: '2026-11-27T22:10:05.703112Z' }),
    ]);
    expect(jupyterActivity(answer('status-busy'), answer('kernels-busy'), NOW)).toEqual(NOW);
  });

  test('idle kernels: the latest use of the server or a kernel (the end of the last cell)', () => {
    expect(jupyterActivity(answer('status-idle'), answer('kernels-idle'), NOW)).toEqual(
      new Date('2026-11-27T22:10:11.704Z'),
    );
  });

  test('a server without kernels: its own last activity (at first, its start)', () => {
    expect(jupyterActivity(answer('status-fresh'), answer('kernels-fresh'), NOW)).toEqual(
      new Date('2026-11-27T22:09:57.616Z'),
    );
  });

  test('a kernel used after the server’s last recorded activity counts', () => {
    const kernels = [
      { id: 'a', execution_state: 'idle', last_activity: '2026-11-27T22:30:00.000001Z' },
      { id: 'b', execution_state: 'starting', last_activity: '2026-11-27T22:20:00Z' },
    ];
    expect(jupyterActivity(answer('status-idle'), kernels, NOW)).toEqual(new Date('2026-11-27T22:30:00Z'));
  });

  test('answers that are not Jupyter’s fail the probe', () => {
    const status = answer('status-idle');
    for (const [s, k] of [
      [{}, []],
      [{ last_activity: 'soon' }, []],
      [[], []],
      [status, {}],
      [status, [{ execution_state: 'idle' }]],
      [status, [{ last_activity: '2026-11-27T22:30:00Z' }]],
      [status, [null]],
    ] as const)
      expect(() => jupyterActivity(s, k, NOW)).toThrow(MalformedAnswer);
  });
});

describe('jupyterActivityProbe', () => {
  test('asks for the status and the kernels, the listing not counted by Jupyter as use', () => {
    expect(jupyterActivityProbe.paths).toEqual(['/api/status', '/api/kernels?no_track_activity=1']);
    expect(jupyterActivityProbe.latestActivity([answer('status-busy'), answer('kernels-busy')], NOW)).toEqual(
      NOW,
    );
  });
});
