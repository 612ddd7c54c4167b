import { ApiError } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import { errorAnswer, notRunningError, unreachableError, wantsHtml } from './state-answer.ts';

const NAME = 'workspaces/w/notebookEngines/n1';

describe('notRunningError() and errorAnswer()', () => {
  test.each(['STATE_STARTING', 'STATE_CONNECTING'])('%s: 503 with Retry-After, the state named', (state) => {
    const answer = errorAnswer(notRunningError(NAME, state), { html: false, state });
    expect(answer.status).toBe(503);
    expect(answer.headers['retry-after']).toBe('5');
    const body = JSON.parse(answer.body) as {
      code: number;
      message: string;
      details: { reason: string; metadata: object }[];
    };
    expect(body.code).toBe(Code.UNAVAILABLE);
    expect(body.message).toBe(`The engine "${NAME}" is not running yet (it is ${state}); retry in a moment`);
    expect(body.details[0]).toMatchObject({ reason: 'ENGINE_STARTING', metadata: { state } });
  });

  test.each(['STATE_PAUSED', 'STATE_PAUSING', 'STATE_FAILED', 'STATE_TERMINATED', 'STATE_DELETING'])(
    '%s: FAILED_PRECONDITION (HTTP 400 in the API model), no retry',
    (state) => {
      const answer = errorAnswer(notRunningError(NAME, state), { html: false, state });
      expect(answer.status).toBe(400);
      expect(answer.headers['retry-after']).toBeUndefined();
      const body = JSON.parse(answer.body) as {
        code: number;
        message: string;
        details: { reason: string }[];
      };
      expect(body.code).toBe(Code.FAILED_PRECONDITION);
      expect(body.message).toContain(`(it is ${state})`);
      expect(body.details[0]?.reason).toBe('ENGINE_NOT_RUNNING');
    },
  );

  test('a browser gets a page naming the state, with the text escaped', () => {
    const answer = errorAnswer(notRunningError('<x>', 'STATE_PAUSED'), { html: true, state: 'STATE_PAUSED' });
    expect(answer.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(answer.body).toContain('<title>Engine PAUSED</title>');
    expect(answer.body).toContain('The engine &quot;&lt;x&gt;&quot; is not running');
  });

  test("a paused engine's page offers its owner a Resume button posting to the given address, escaped", () => {
    const paused = notRunningError('workspaces/w/notebookEngines/n1', 'STATE_PAUSED');
    const offered = errorAnswer(paused, {
      html: true,
      state: 'STATE_PAUSED',
      resumeAction: '/workspaces/w/notebookEngines/n1/?resume&"x"',
    });
    expect(offered.body).toContain(
      '<form method="post" action="/workspaces/w/notebookEngines/n1/?resume&amp;&quot;x&quot;"><button type="submit">Resume</button></form>',
    );
    expect(errorAnswer(paused, { html: true, state: 'STATE_PAUSED' }).body).not.toContain('<form');
  });

  test('an engine that refuses while running: 502 with a JSON body saying so', () => {
    const answer = errorAnswer(unreachableError(NAME, new Error('ECONNREFUSED')), {
      html: false,
      httpStatus: 502,
    });
    expect(answer.status).toBe(502);
    expect(JSON.parse(answer.body)).toMatchObject({
      code: Code.UNAVAILABLE,
      message: `The engine "${NAME}" is running but did not answer; retry, or look at its logs`,
    });
  });

  test('401 carries the Bearer challenge', () => {
    const answer = errorAnswer(new ApiError(Code.UNAUTHENTICATED, 'no token'), { html: false });
    expect(answer.status).toBe(401);
    expect(answer.headers['www-authenticate']).toBe('Bearer realm="ai-engine-manager"');
  });
});

describe('wantsHtml()', () => {
  test.each([
    ['text/html,application/xhtml+xml,*/*;q=0.8', true],
    ['application/json, text/html', true],
    ['application/json', false],
    ['*/*', false],
    [undefined, false],
  ])('%s: %s', (accept, html) => {
    expect(wantsHtml(accept)).toBe(html);
  });
});
