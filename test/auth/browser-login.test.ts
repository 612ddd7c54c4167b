/**
 * Browser sign-in, in Chromium, against the embedded OpenID provider: the authorization-code flow
 * with PKCE ends in an HttpOnly session cookie that names the account picked on the provider's
 * login page, and brings the browser back to the page it asked for — on this platform only. A
 * sign-in that was not started here, or whose answer was tampered with, starts no session;
 * another site can neither finish a sign-in nor sign anyone out.
 */
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import express from 'express';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { browserLogin } from '../../gateway/src/access/browser-login.ts';
import { cookieOf, LOGIN_COOKIE, SESSION_COOKIE, Sessions } from '../../gateway/src/access/session.ts';
import { oidcAuthenticate } from '../../gateway/src/auth/oidc.ts';
import { CHROMIUM_PATH, QUIET_CHROMIUM_FLAGS } from '../../scripts/chromium.ts';
import { freePort } from '../cluster/ports.ts';
import { startIdentityProvider, type IdentityProvider } from '../identity/provider.ts';

let provider: IdentityProvider;
let server: Server;
let browser: Browser;
let platform: string;
let sessions: Sessions;

beforeAll(async () => {
  provider = await startIdentityProvider({
    accounts: [
      { id: 'alice', name: 'Alice Smith', roles: ['data-scientist'] },
      { id: 'bob', name: 'Bob Jones', roles: ['analyst'] },
    ],
  });
  const port = await freePort();
  platform = `http://127.0.0.1:${port}`;
  provider.allowRedirect(`${platform}/auth/callback`);
  sessions = new Sessions({ key: randomBytes(32), publicUrl: platform, ttlSeconds: 600 });
  const login = browserLogin({
    issuer: provider.issuer,
    clientId: provider.browserClientId,
    scopes: provider.browserScopes,
    publicUrl: platform,
    sessions,
    authenticate: oidcAuthenticate({
      issuer: provider.issuer,
      audiences: [provider.audience],
      claims: { subject: 'sub', displayName: 'name', roles: provider.rolesClaim },
    }),
  });
  const app = express();
  app.use(login.router);
  // A page of the platform that says who its session is.
  app.get('/workspaces/*rest', (req, res) => {
    const token = cookieOf(req.headers.cookie, SESSION_COOKIE);
    if (token === undefined) return void res.status(401).json({ signedIn: false });
    sessions.caller(token).then(
      (caller) => res.json({ signedIn: true, ...caller, path: req.originalUrl }),
      () => res.status(401).json({ signedIn: false }),
    );
  });
  app.get('/', (_req, res) => res.type('text/plain').send('the platform'));
  server = await new Promise((resolve) => {
    const s = app.listen(port, '127.0.0.1', () => {
      resolve(s);
    });
  });
  browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [...QUIET_CHROMIUM_FLAGS],
  });
}, 60_000);

afterAll(async () => {
  await browser.close();
  await new Promise((resolve) => server.close(resolve));
  await provider.stop();
});

/** Signs in as `account` in a new browser, starting at the sign-in for `next`; the page's JSON. */
async function signIn(
  account: string,
  next: string,
): Promise<{ context: BrowserContext; landed: string; body: string }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${platform}/auth/login?next=${encodeURIComponent(next)}`);
  // The provider's own login page, on the provider's address.
  expect(new URL(page.url()).origin).toBe(provider.issuer);
  await page.getByRole('button', { name: new RegExp(`\\(${account}\\)`) }).click();
  await page.waitForURL((url) => url.origin === platform);
  return { context, landed: page.url(), body: (await page.locator('body').innerText()).trim() };
}

describe('browser sign-in', () => {
  test('a browser signs in at the identity provider and comes back to its page with a session', async () => {
    const { context, landed, body } = await signIn('alice', '/workspaces/lab/notebookEngines/nb/lab?reset');
    expect(landed).toBe(`${platform}/workspaces/lab/notebookEngines/nb/lab?reset`);
    expect(JSON.parse(body)).toEqual({
      signedIn: true,
      subject: 'users/alice',
      displayName: 'Alice Smith',
      roles: ['data-scientist'],
      path: '/workspaces/lab/notebookEngines/nb/lab?reset',
    });
    const cookies = await context.cookies(platform);
    const session = cookies.find((c) => c.name === SESSION_COOKIE);
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
    // The sign-in in progress is over, and the page's scripts cannot read the session.
    expect(cookies.find((c) => c.name === LOGIN_COOKIE)).toBeUndefined();
    const page = context.pages()[0];
    expect(await page?.evaluate('document.cookie')).not.toContain(SESSION_COOKIE);
    await context.close();
  }, 60_000);

  test.each([
    ['another site by a scheme-relative address', '//evil.example/steal'],
    ['another site by a backslash', '/\\evil.example/steal'],
    ['another site by an absolute address', 'https://evil.example/steal'],
    ['a non-path', 'javascript:alert(1)'],
  ])(
    'the sign-in never ends on %s',
    async (_what, next) => {
      const { context, landed } = await signIn('bob', next);
      expect(landed).toBe(`${platform}/`);
      await context.close();
    },
    60_000,
  );

  test('a callback that this browser did not start, or whose state was changed, starts no session', async () => {
    // No sign-in in progress: an attacker's code sent to a victim's browser (login CSRF).
    const context = await browser.newContext();
    const page = await context.newPage();
    const stray = await page.goto(`${platform}/auth/callback?code=stolen&state=guessed`);
    expect(stray?.status()).toBe(400);
    expect(await page.content()).toContain('Sign-in not completed');
    // A sign-in in progress whose state does not match what comes back.
    // The provider's redirects are followed here (the browser's own hops cannot be intercepted),
    // and the browser is sent to the callback with another state.
    await page.route(`${provider.issuer}/interaction/**`, async (route) => {
      if (route.request().method() !== 'POST') return route.continue();
      let location = (await route.fetch({ maxRedirects: 0 })).headers()['location'];
      while (location !== undefined && !location.startsWith(`${platform}/auth/callback`))
        location = (
          await context.request.get(new URL(location, provider.issuer).href, { maxRedirects: 0 })
        ).headers()['location'];
      const url = new URL(location ?? platform);
      url.searchParams.set('state', 'tampered');
      return route.fulfill({ status: 302, headers: { location: url.href } });
    });
    await page.goto(`${platform}/auth/login?next=/workspaces/lab/x`);
    await page.getByRole('button', { name: /\(alice\)/ }).click();
    await page.waitForURL((url) => url.origin === platform);
    expect(await page.content()).toContain('Sign-in not completed');
    expect((await context.cookies(platform)).map((c) => c.name)).not.toContain(SESSION_COOKIE);
    await context.close();
  }, 60_000);

  test('a session signs out from the platform, not from another site', async () => {
    const { context } = await signIn('alice', '/workspaces/lab/x');
    const cookie = (await context.cookies(platform)).find((c) => c.name === SESSION_COOKIE);
    const header = `${SESSION_COOKIE}=${cookie?.value ?? ''}`;
    const foreign = await fetch(`${platform}/auth/logout`, {
      method: 'POST',
      headers: { cookie: header, origin: 'https://evil.example' },
    });
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get('set-cookie')).toBeNull();
    const page = await context.newPage();
    await page.goto(`${platform}/auth/logout`);
    await page.getByRole('button', { name: /Sign out/ }).click();
    await page.waitForURL(`${platform}/auth/logout`);
    expect(await page.locator('h1').innerText()).toBe('Signed out');
    expect((await context.cookies(platform)).map((c) => c.name)).not.toContain(SESSION_COOKIE);
    await context.close();
  }, 60_000);

  test('a session is refused once tampered with, signed with another key, or expired', async () => {
    const { context } = await signIn('alice', '/workspaces/lab/x');
    const token = (await context.cookies(platform)).find((c) => c.name === SESSION_COOKIE)?.value ?? '';
    await context.close();
    expect((await sessions.caller(token)).subject).toBe('users/alice');
    const [header, payload, signature] = token.split('.');
    const claims = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString()) as Record<string, unknown>;
    const forged = Buffer.from(JSON.stringify({ ...claims, sub: 'bob' })).toString('base64url');
    await expect(sessions.caller(`${header}.${forged}.${signature}`)).rejects.toMatchObject({ code: 16 });
    const elsewhere = new Sessions({ key: randomBytes(32), publicUrl: platform, ttlSeconds: 600 });
    await expect(elsewhere.caller(token)).rejects.toMatchObject({ code: 16 });
    const brief = new Sessions({ key: randomBytes(32), publicUrl: platform, ttlSeconds: -1 });
    const expired = cookieOf(
      (await brief.signIn({ subject: 'users/a', displayName: 'A', roles: [] })).split(';')[0],
      SESSION_COOKIE,
    );
    await expect(brief.caller(expired ?? '')).rejects.toMatchObject({ code: 16 });
  }, 60_000);
});
