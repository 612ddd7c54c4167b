/**
 * The admission webhook server: HTTPS on its own port, where the apiserver sends the reviews of
 * every write of the product's kinds (the chart registers it; see charts/…/webhooks.yaml).
 * `POST /admission/mutate` and `POST /admission/validate` answer AdmissionReviews (decide.ts);
 * `GET /healthz` answers ok.
 *
 * The certificate is read from files (a mounted Secret's `tls.crt` and `tls.key`) and read again
 * when they change, so that a renewed certificate (cert-manager) is served without a
 * restart.
 */
import { readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import { log } from '../log.ts';
import type { ResourceStore } from '../store/store.ts';
import { AdmittedWrites } from './admitted-writes.ts';
import { decide, type DecideDeps, type Decision, type Mode } from './decide.ts';
import { answer, type AdmissionReview } from './review.ts';

/** The apiserver sends whole objects; a profile with pod templates may be large. */
const MAX_REVIEW_BYTES = 10 * 1024 * 1024;
/** How long an admitted change may take to be stored before its follow-up steps give up on it. */
const LANDING_MS = 10_000;
/** How often the certificate files are checked for a renewal. */
const CERTIFICATE_CHECK_MS = 30_000;

export interface WebhookOptions extends DecideDeps {
  host: string;
  port: number;
  /** The serving certificate (PEM, with its chain) and key, e.g. tls.crt and tls.key of a mounted Secret. */
  certFile: string;
  keyFile: string;
  store: ResourceStore;
}

export interface Webhook {
  url: string;
  stop(): Promise<void>;
}

export async function startWebhook(options: WebhookOptions): Promise<Webhook> {
  const app = express();
  app.disable('x-powered-by');
  app.get('/healthz', (_req, res) => {
    res.type('text/plain').send('ok');
  });
  app.use(express.json({ limit: MAX_REVIEW_BYTES }));
  // Each replica remembers its own mutating reviews; a validating review sent to another one
  // finds no record and runs the handler in full.
  const deps: WebhookOptions = { ...options, admitted: options.admitted ?? new AdmittedWrites() };
  app.post('/admission/:mode', (req, res, next) => {
    review(deps, req, res).catch(next);
  });
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    // Only a malformed review gets here: the apiserver sends well-formed ones.
    const status =
      typeof error === 'object' && error !== null && 'status' in error ? Number(error.status) : 500;
    if (status >= 500) log.error({ err: error }, 'admission review failed');
    res
      .status(status)
      .type('text/plain')
      .send(status >= 500 ? 'internal error' : 'not an AdmissionReview');
  });
  const certificate = new Certificate(options.certFile, options.keyFile);
  const server: Server = createServer(certificate.read(), app);
  const check = setInterval(() => {
    if (certificate.changed()) server.setSecureContext(certificate.read());
  }, CERTIFICATE_CHECK_MS);
  check.unref();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://${options.host}:${port}`,
    async stop(): Promise<void> {
      clearInterval(check);
      await new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
        server.closeIdleConnections();
      });
    },
  };
}

async function review(options: WebhookOptions, req: Request, res: Response): Promise<void> {
  const mode = req.params['mode'];
  const body = req.body as AdmissionReview | undefined;
  const request = body?.request;
  if ((mode !== 'mutate' && mode !== 'validate') || typeof request?.uid !== 'string') {
    res.status(400).type('text/plain').send('not an AdmissionReview');
    return;
  }
  const decision = await decide(mode satisfies Mode, request, options);
  res.json(answer(decision.response));
  if (decision.settle !== undefined) void settle(options.store, decision.settle);
}

/** Once the admitted change is stored (or is not, in time), does what had to wait for it. */
async function settle(store: ResourceStore, settling: NonNullable<Decision['settle']>): Promise<void> {
  const { admission, kind, objectName, previous } = settling;
  try {
    const landed = await store.landing(kind, objectName, previous, LANDING_MS);
    await admission.landed(landed);
  } catch (error: unknown) {
    log.error({ err: error, kind: kind.kind, objectName }, 'the follow-up of an admitted change failed');
  }
}

/** The serving certificate's files, and whether they changed since last read. */
class Certificate {
  private readonly cert: string;
  private readonly key: string;
  private readAt = '';

  constructor(cert: string, key: string) {
    this.cert = cert;
    this.key = key;
  }

  read(): { cert: Buffer; key: Buffer } {
    this.readAt = this.stamp();
    return { cert: readFileSync(this.cert), key: readFileSync(this.key) };
  }

  changed(): boolean {
    try {
      return this.stamp() !== this.readAt;
    } catch {
      // Mid-renewal (a Secret's files are swapped by a symlink): the next check reads it.
      return false;
    }
  }

  private stamp(): string {
    return [this.cert, this.key].map((file) => statSync(file).mtimeMs).join('/');
  }
}
