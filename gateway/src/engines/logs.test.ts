import { ApiError } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import type { ContainerLog, EnginePod, LogLimits, PodLogSource } from '../store/pod-logs.ts';
import {
  containerLimits,
  engineLogs,
  inOrdinalOrder,
  logsText,
  MAX_CONTAINER_BYTES,
  MAX_TAIL_LINES,
  TOTAL_LOG_BYTES,
} from './logs.ts';

/** Pods and logs held in memory; a log given as an Error is refused as the cluster would. */
function source(
  pods: EnginePod[],
  logs: Record<string, string | Error>,
): PodLogSource & { asked: LogLimits[] } {
  const asked: LogLimits[] = [];
  return {
    asked,
    podsOf: () => Promise.resolve(pods),
    read: (pod, container, limits) => {
      asked.push(limits);
      const log = logs[`${pod}/${container}`];
      if (log instanceof ApiError) return Promise.reject(log);
      const result: ContainerLog =
        log instanceof Error ? { pod, container, error: log.message } : { pod, container, text: log ?? '' };
      return Promise.resolve(result);
    },
  };
}

describe('containerLimits()', () => {
  test('gives each container its newest lines and an equal share of the download, at most 1 MiB', () => {
    expect(containerLimits(1)).toEqual({ tailLines: MAX_TAIL_LINES, limitBytes: MAX_CONTAINER_BYTES });
    expect(containerLimits(30).limitBytes).toBe(Math.floor(TOTAL_LOG_BYTES / 30));
    expect(containerLimits(30).limitBytes * 30).toBeLessThanOrEqual(TOTAL_LOG_BYTES);
  });
});

describe('inOrdinalOrder()', () => {
  test('orders StatefulSet pods by their ordinal as a number', () => {
    const pods = ['h2o-ab-10', 'h2o-ab-2', 'h2o-ab-0', 'h2o-ab-1'].map((name) => ({ name, containers: [] }));
    expect(inOrdinalOrder(pods).map((p) => p.name)).toEqual([
      'h2o-ab-0',
      'h2o-ab-1',
      'h2o-ab-2',
      'h2o-ab-10',
    ]);
  });
});

describe('logsText()', () => {
  const limits = { tailLines: 3, limitBytes: 100 };

  test('puts each container under a header line naming the pod and the container', () => {
    const text = logsText(
      [
        { pod: 'p-0', container: 'main', text: 'one\ntwo\n' },
        { pod: 'p-1', container: 'main', text: 'no newline at the end' },
      ],
      limits,
    );
    expect(text).toBe(
      [
        '===== pod "p-0", container "main" =====',
        'one',
        'two',
        '',
        '===== pod "p-1", container "main" =====',
        'no newline at the end',
        '',
      ].join('\n'),
    );
  });

  test('says why a container’s log could not be read', () => {
    expect(
      logsText([{ pod: 'p-0', container: 'main', error: 'container is waiting to start' }], limits),
    ).toBe('===== pod "p-0", container "main" =====\n(log unavailable: container is waiting to start)\n');
  });

  test('says when a log reached the line or byte limit', () => {
    const lines = logsText([{ pod: 'p-0', container: 'main', text: 'a\nb\nc\n' }], limits);
    const bytes = logsText([{ pod: 'p-0', container: 'main', text: 'x'.repeat(100) }], limits);
    for (const text of [lines, bytes]) expect(text).toContain('(log truncated: ');
    expect(logsText([{ pod: 'p-0', container: 'main', text: 'a\nb\n' }], limits)).not.toContain('truncated');
  });

  test('is empty without containers', () => {
    expect(logsText([], limits)).toBe('');
  });
});

describe('engineLogs()', () => {
  test('reads every container of every pod, pods in ordinal order, init containers first', async () => {
    const pods = [
      { name: 'h2o-x-1', containers: ['h2o'] },
      { name: 'h2o-x-0', containers: ['setup', 'h2o'] },
    ];
    const logs = source(pods, {
      'h2o-x-0/setup': 'prepared\n',
      'h2o-x-0/h2o': 'node 0\n',
      'h2o-x-1/h2o': 'node 1\n',
    });
    const text = await engineLogs(logs, 'uid');
    const headers = text.split('\n').filter((line) => line.startsWith('====='));
    expect(headers).toEqual([
      '===== pod "h2o-x-0", container "setup" =====',
      '===== pod "h2o-x-0", container "h2o" =====',
      '===== pod "h2o-x-1", container "h2o" =====',
    ]);
    expect(text).toContain('prepared\n');
    expect(text.indexOf('node 0')).toBeLessThan(text.indexOf('node 1'));
    expect(logs.asked).toEqual(Array.from({ length: 3 }, () => containerLimits(3)));
  });

  test('keeps the other logs when one cannot be read', async () => {
    const pods = [{ name: 'e-0', containers: ['a', 'b'] }];
    const text = await engineLogs(
      source(pods, { 'e-0/a': new Error('not started'), 'e-0/b': 'fine\n' }),
      'uid',
    );
    expect(text).toContain('(log unavailable: not started)');
    expect(text).toContain('fine\n');
  });

  test('is empty for an engine without pods', async () => {
    expect(await engineLogs(source([], {}), 'uid')).toBe('');
  });

  test('fails as the cluster does when it does not answer', async () => {
    const offline = new ApiError(Code.UNAVAILABLE, 'The cluster is unavailable; retry later');
    const pods = [{ name: 'e-0', containers: ['a'] }];
    await expect(engineLogs(source(pods, { 'e-0/a': offline }), 'uid')).rejects.toBe(offline);
  });
});
