import { forwardHeaders, type ForwardingFacts } from './forward-headers.ts';

const facts: ForwardingFacts = {
  clientAddress: '10.1.2.3',
  proto: 'https',
  forwardAuthorization: false,
  websocket: false,
};

describe('forwardHeaders()', () => {
  test('keeps end-to-end headers: Host, cookies, Jupyter XSRF token, Origin, content headers', () => {
    const endToEnd = {
      host: 'aiem.example.com',
      cookie: '_xsrf=abc',
      'x-xsrftoken': 'abc',
      origin: 'https://aiem.example.com',
      'content-type': 'application/json',
      'content-length': '12',
    };
    expect(forwardHeaders(endToEnd, facts)).toMatchObject(endToEnd);
  });

  test('sets the forwarding headers itself, whatever the client claimed', () => {
    const out = forwardHeaders(
      {
        host: 'aiem.example.com',
        'x-forwarded-for': '1.1.1.1',
        'x-forwarded-proto': 'http',
        'x-forwarded-host': 'evil.example',
        'x-forwarded-port': '1',
        'x-forwarded-prefix': '/other',
        'x-real-ip': '1.1.1.1',
        forwarded: 'for=1.1.1.1;host=evil.example',
      },
      facts,
    );
    expect(out).toEqual({
      host: 'aiem.example.com',
      'x-forwarded-for': '10.1.2.3',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'aiem.example.com',
      forwarded: 'for=10.1.2.3;proto=https;host=aiem.example.com',
    });
  });

  test('quotes an IPv6 client and a Host with a port in Forwarded', () => {
    const out = forwardHeaders({ host: '[::1]:8080' }, { ...facts, clientAddress: '::1' });
    expect(out['forwarded']).toBe('for="[::1]";proto=https;host="[::1]:8080"');
  });

  test('drops hop-by-hop headers and those the Connection header names', () => {
    const out = forwardHeaders(
      {
        host: 'h',
        connection: 'keep-alive, X-Secret',
        'keep-alive': 'timeout=5',
        'x-secret': 's',
        te: 'trailers',
        trailer: 'x',
        'transfer-encoding': 'chunked',
        upgrade: 'h2c',
        'proxy-authorization': 'Basic x',
        'proxy-connection': 'keep-alive',
        accept: '*/*',
      },
      facts,
    );
    expect(Object.keys(out).sort()).toEqual(
      ['accept', 'forwarded', 'host', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto'].sort(),
    );
  });

  test("keeps the engine's cookies and drops the caller's session", () => {
    const out = forwardHeaders({ cookie: '_xsrf=abc; aiem_session=secret' }, facts);
    expect(out.cookie).toBe('_xsrf=abc');
    expect(forwardHeaders({ cookie: 'aiem_session=secret' }, facts).cookie).toBeUndefined();
  });

  test('keeps the product token from engines unless their kind verifies it', () => {
    const incoming = { host: 'h', authorization: 'Bearer t' };
    expect(forwardHeaders(incoming, facts)['authorization']).toBeUndefined();
    expect(forwardHeaders(incoming, { ...facts, forwardAuthorization: true })['authorization']).toBe(
      'Bearer t',
    );
  });

  test('a WebSocket upgrade keeps Upgrade: websocket and its handshake headers', () => {
    const out = forwardHeaders(
      {
        host: 'h',
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-key': 'k',
        'sec-websocket-version': '13',
        'sec-websocket-protocol': 'v1.kernel.websocket.jupyter.org',
      },
      { ...facts, websocket: true },
    );
    expect(out).toMatchObject({
      connection: 'Upgrade',
      upgrade: 'websocket',
      'sec-websocket-key': 'k',
      'sec-websocket-version': '13',
      'sec-websocket-protocol': 'v1.kernel.websocket.jupyter.org',
    });
  });
});
