import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type { V1Pod } from '@kubernetes/client-node';
import { pino } from 'pino';
import { h2oEngineKind } from '../kinds/h2o-engine.ts';
import type { EngineKind, EngineResource } from '../kinds/kind.ts';
import { notebookEngineKind } from '../kinds/notebook-engine.ts';
import {
  httpActivityProber,
  httpEngineAsker,
  podAddress,
  servingAddress,
  type EngineQuestion,
  type ProbeRequest,
} from './prober.ts';

const fixture = (name: string): string =>
  readFileSync(new URL(`./__fixtures__/${name}.json`, import.meta.url), 'utf8');

const NOW = new Date('2026-11-27T23:00:00Z');
const SETTINGS = { publicUrl: 'https://cloud.example.com/engines' };

/** The paths the fake engine was asked, and what it answers. */
let asked: string[] = [];
let answers: Record<string, string> = {};
let server: Server;
let port: number;

beforeAll(async () => {
  server = createServer((req, res) => {
    asked.push(req.url ?? '');
    const body = answers[req.url ?? ''];
    if (body === undefined) res.writeHead(404).end();
    else res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  asked = [];
  answers = {};
});

function pod(ip: string | undefined, ready: boolean, deleting = false): V1Pod {
  return {
    metadata: { name: `p-${ip ?? 'none'}`, ...(deleting ? { deletionTimestamp: new Date() } : {}) },
    status: {
      ...(ip !== undefined ? { podIP: ip } : {}),
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
    },
  };
}

function engine(): EngineResource {
  return {
    metadata: {
      name: 'w.e1',
      labels: { 'engine.h2o.ai/workspace': 'w', 'engine.h2o.ai/id': 'e1' },
    },
    spec: {},
    status: {},
  };
}

/** A prober that logs into `lines`, and reaches pods at their IP on the fake engine's port. */
function prober(lines: string[]): ReturnType<typeof httpActivityProber> {
  const log = pino(
    { level: 'debug' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    }),
  );
  return httpActivityProber({ log, address: (p) => podAddress(p, port) });
}

function request(kind: EngineKind, pods: V1Pod[]): ProbeRequest {
  if (kind.activityProbe === undefined) throw new TypeError(`${kind.kind} has no activity probe`);
  return {
    kind,
    probe: kind.activityProbe,
    engine: engine(),
    pods,
    settings: SETTINGS,
    now: NOW,
  };
}

describe('servingAddress()', () => {
  test('the first ready pod with an IP, at the kind’s port; none while no pod is ready', () => {
    expect(servingAddress([pod('10.0.0.1', false), pod('10.0.0.2', true)], 54321)).toEqual({
      host: '10.0.0.2',
      port: 54321,
    });
    expect(servingAddress([pod(undefined, true), pod('10.0.0.3', true)], 8888)?.host).toBe('10.0.0.3');
    expect(servingAddress([pod('10.0.0.1', false), pod('10.0.0.2', true, true)], 8888)).toBeUndefined();
  });
});

describe('httpActivityProber()', () => {
  test('asks a notebook’s Jupyter under the engine’s path; a busy kernel is activity now', async () => {
    const path = '/engines/workspaces/w/notebookEngines/e1';
    answers = {
      [`${path}/api/status`]: fixture('jupyter-status-busy'),
      [`${path}/api/kernels?no_track_activity=1`]: fixture('jupyter-kernels-busy'),
    };
    const lines: string[] = [];
    const outcome = await prober(lines)(request(notebookEngineKind, [pod('127.0.0.1', true)]));
    expect(outcome).toEqual({ found: NOW });
    expect(asked.sort()).toEqual([`${path}/api/kernels?no_track_activity=1`, `${path}/api/status`]);
    expect(lines.join('')).toContain('Probed engine activity');
  });

  test('asks an H2O cloud’s leader (its ready pod), not a follower', async () => {
    answers = { '/engines/workspaces/w/h2oEngines/e1/3/Jobs': fixture('h2o-jobs-ended') };
    // The follower's address would refuse the connection: nothing listens there.
    const pods = [pod('127.0.0.9', false), pod('127.0.0.1', true)];
    const outcome = await prober([])(request(h2oEngineKind, pods));
    expect(outcome).toEqual({ found: new Date(1795817427982 + 4876) });
  });

  test('a failure is an outcome, logged: no ready pod, an error answer, an answer not the engine’s', async () => {
    const lines: string[] = [];
    const probe = prober(lines);
    expect(await probe(request(notebookEngineKind, [pod('127.0.0.1', false)]))).toEqual({
      failure: 'no ready pod with an address',
    });
    expect(await probe(request(notebookEngineKind, [pod('127.0.0.1', true)]))).toEqual({
      failure: 'answered HTTP 404',
    });
    answers = { '/engines/workspaces/w/h2oEngines/e1/3/Jobs': '{"jobs": {}}' };
    expect(await probe(request(h2oEngineKind, [pod('127.0.0.1', true)]))).toEqual({
      failure: 'the jobs is not a list',
    });
    const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logged.filter((l) => l['msg'] === 'Failed to probe engine activity')).toEqual([
      expect.objectContaining({
        engine: 'w.e1',
        kind: 'NotebookEngine',
        reason: 'no ready pod with an address',
      }),
      expect.objectContaining({ engine: 'w.e1', kind: 'NotebookEngine', reason: 'answered HTTP 404' }),
      expect.objectContaining({ engine: 'w.e1', kind: 'H2OEngine', reason: 'the jobs is not a list' }),
    ]);
  });
});

describe('httpEngineAsker()', () => {
  const asker = httpEngineAsker({ log: pino({ level: 'silent' }), address: (p) => podAddress(p, port) });
  const question = (pods: V1Pod[]): EngineQuestion => ({
    kind: h2oEngineKind,
    engine: engine(),
    pods,
    settings: SETTINGS,
    paths: ['/3/Cloud'],
  });

  test('tells a refusal (the engine answers with an error status) from no answer at all', async () => {
    answers = { '/engines/workspaces/w/h2oEngines/e1/3/Cloud': '{"cloud_size": 2, "consensus": true}' };
    expect(await asker(question([pod('127.0.0.1', true)]))).toEqual({
      answers: [{ cloud_size: 2, consensus: true }],
    });
    answers = {};
    expect(await asker(question([pod('127.0.0.1', true)]))).toEqual({
      failure: 'answered HTTP 404',
      refusedWith: 404,
    });
    const unserved = await asker(question([pod('127.0.0.9', true)]));
    expect('refusedWith' in unserved).toBe(false);
    expect('failure' in unserved && unserved.failure).toMatch(/ECONNREFUSED/);
  });
});
