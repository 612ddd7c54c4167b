/**
 * Browser sign-in for engine addresses: `/auth/login` starts an OpenID Connect authorization-code
 * flow with PKCE at the platform's identity provider (openid-client), `/auth/callback` finishes
 * it, checks the access token exactly as the API checks bearer tokens, and starts a session
 * (./session.ts); `/auth/logout` ends it. A browser that opens an engine without a session is
 * sent to `/auth/login` and comes back to the page it asked for, never to another site.
 */
import express, { type Request, type Response, type Router } from 'express';
import * as oidc from 'openid-client';
import type { Authenticate } from '../call/handler.ts';
import { ApiError } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import { log } from '../log.ts';
import { CALLBACK_PATH, cookieOf, LOGIN_COOKIE, type Sessions } from './session.ts';
import { errorAnswer, type Answer } from './state-answer.ts';

/** The identity provider's client that browsers sign in through. */
export interface BrowserLoginOptions {
  /** The issuer URL, as for the API's tokens. */
  issuer: string;
  clientId: string;
  /** Set for a confidential client; a public client proves itself by PKCE alone. */
  clientSecret?: string;
  /** The scopes asked for; the access token must be one the API accepts. */
  scopes: string;
  /** The platform's public address, under which `/auth/callback` is registered. */
  publicUrl: string;
  sessions: Sessions;
  /** The API's check of bearer tokens, run on the access token the sign-in gives. */
  authenticate: Authenticate;
}

/** The sign-in routes and where a browser without a session is sent. */
export interface BrowserLogin {
  router: Router;
  /** The sign-in address that comes back to `target` (a request target on this platform). */
  loginUrl: (target: string) => string;
  /** The platform's origin, whose pages alone may use a session for changes and WebSockets. */
  origin: string;
}

/** The path of the platform's public address, without a trailing slash ('' at the root). */
export function publicPath(publicUrl: string): string {
  return new URL(publicUrl).pathname.replace(/\/+$/, '');
}

/**
 * Where to go after signing in: a path on this platform, or its root. Anything that a browser
 * could read as another site (`//evil`, `/\evil`, `https://evil`, control characters) is refused.
 */
export function safeNext(next: unknown, publicUrl: string): string {
  const root = `${publicPath(publicUrl)}/`;
  if (typeof next !== 'string' || !next.startsWith('/') || /^\/[/\\]/.test(next)) return root;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f\\]/.test(next)) return root;
  const origin = new URL(publicUrl).origin;
  const url = new URL(next, origin);
  return url.origin === origin ? `${url.pathname}${url.search}` : root;
}

function html(res: Response, answer: Answer): void {
  res.status(answer.status).set(answer.headers).send(answer.body);
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${title}</title></head>
<body><h1>${title}</h1>${body}</body></html>
`;
}

/** The sign-in routes of {@link BrowserLoginOptions}. */
export function browserLogin(options: BrowserLoginOptions): BrowserLogin {
  const { sessions } = options;
  const base = publicPath(options.publicUrl);
  const origin = new URL(options.publicUrl).origin;
  const redirectUri = `${origin}${base}${CALLBACK_PATH}`;
  let discovered: Promise<oidc.Configuration> | undefined;
  const configuration = (): Promise<oidc.Configuration> => {
    const server = new URL(options.issuer);
    discovered ??= oidc
      .discovery(
        server,
        options.clientId,
        options.clientSecret,
        options.clientSecret === undefined ? oidc.None() : oidc.ClientSecretPost(options.clientSecret),
        // A loopback or in-cluster issuer may be plain HTTP, as for the API's tokens (the
        // function is marked deprecated only to stand out).
        // eslint-disable-next-line @typescript-eslint/no-deprecated
        server.protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : {},
      )
      .catch((error: unknown) => {
        discovered = undefined;
        throw error;
      });
    return discovered;
  };
  const unavailable = (error: unknown): Answer => {
    log.warn({ err: error }, 'Browser sign-in failed at the identity provider');
    return errorAnswer(
      new ApiError(Code.UNAVAILABLE, 'The identity provider cannot be reached now; try again later', {
        reason: 'IDENTITY_PROVIDER_UNAVAILABLE',
      }),
      { html: true },
    );
  };

  const router = express.Router();
  router.get('/auth/login', (req: Request, res: Response) => {
    const next = safeNext(req.query['next'], options.publicUrl);
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    Promise.all([configuration(), oidc.calculatePKCECodeChallenge(codeVerifier)])
      .then(async ([config, challenge]) => {
        const url = oidc.buildAuthorizationUrl(config, {
          redirect_uri: redirectUri,
          scope: options.scopes,
          code_challenge: challenge,
          code_challenge_method: 'S256',
          state,
          nonce,
        });
        res
          .status(302)
          .set({
            'set-cookie': await sessions.startLogin({ state, nonce, codeVerifier, next }),
            location: url.href,
            'cache-control': 'no-store',
          })
          .end();
      })
      .catch((error: unknown) => {
        html(res, unavailable(error));
      });
  });

  router.get(CALLBACK_PATH, (req: Request, res: Response) => {
    const restart = (message: string): void => {
      res
        .status(400)
        .set({ 'set-cookie': sessions.endLogin(), 'cache-control': 'no-store' })
        .type('html')
        .send(
          page(
            'Sign-in not completed',
            `<p>${message}</p><p><a href="${base}/auth/login">Sign in again</a></p>`,
          ),
        );
    };
    (async () => {
      const pending = await sessions.pendingLogin(cookieOf(req.headers.cookie, LOGIN_COOKIE));
      if (pending === undefined) {
        restart('This sign-in expired or was started in another browser.');
        return;
      }
      const config = await configuration().catch((error: unknown) => {
        html(res, unavailable(error));
      });
      if (config === undefined) return;
      const query = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?')) : '';
      const tokens = await oidc
        .authorizationCodeGrant(config, new URL(`${redirectUri}${query}`), {
          pkceCodeVerifier: pending.codeVerifier,
          expectedState: pending.state,
          expectedNonce: pending.nonce,
          idTokenExpected: true,
        })
        .catch((error: unknown) => {
          log.info({ reason: error instanceof Error ? error.message : String(error) }, 'Sign-in refused');
        });
      if (tokens === undefined) {
        restart('The identity provider did not confirm this sign-in.');
        return;
      }
      // The same check as the API's: a token the API would refuse starts no session either.
      const caller = await options
        .authenticate({ authorization: `Bearer ${tokens.access_token}` })
        .catch((error: unknown) => {
          log.info({ err: error }, 'Sign-in token refused');
        });
      if (caller === undefined) {
        restart('The identity provider signed you in with a token this platform does not accept.');
        return;
      }
      res
        .status(302)
        .set({ location: pending.next, 'cache-control': 'no-store' })
        .append('set-cookie', [await sessions.signIn(caller), sessions.endLogin()])
        .end();
    })().catch((error: unknown) => {
      html(res, unavailable(error));
    });
  });

  router.get('/auth/logout', (_req: Request, res: Response) => {
    res
      .set('cache-control', 'no-store')
      .type('html')
      .send(
        page(
          'Sign out',
          `<form method="post" action="${base}/auth/logout"><button type="submit">Sign out of AI Engine Manager</button></form>`,
        ),
      );
  });

  router.post('/auth/logout', (req: Request, res: Response) => {
    // Another site must not sign people out: only a form of this platform's own pages may.
    if (!sameOrigin(req.headers, origin)) {
      html(
        res,
        errorAnswer(
          new ApiError(Code.PERMISSION_DENIED, "Sign-out is accepted from this platform's pages only"),
          { html: true },
        ),
      );
      return;
    }
    res
      .status(200)
      .set({ 'set-cookie': sessions.signOut(), 'cache-control': 'no-store' })
      .type('html')
      .send(page('Signed out', `<p><a href="${base}/auth/login">Sign in again</a></p>`));
  });

  return {
    router,
    origin,
    loginUrl: (target) => `${base}/auth/login?next=${encodeURIComponent(`${base}${target}`)}`,
  };
}

/**
 * Whether a browser request comes from this platform's own pages: its `Origin` is the platform's,
 * or, without one, the browser says it is not cross-site (`Sec-Fetch-Site`). A request with
 * neither (not a browser's) carries no ambient credentials of another site's making.
 */
export function sameOrigin(
  headers: Readonly<Record<string, string | string[] | undefined>>,
  origin: string,
): boolean {
  const from = headers['origin'];
  if (typeof from === 'string') return from === origin;
  const site = headers['sec-fetch-site'];
  return site === undefined || site === 'same-origin' || site === 'none';
}
