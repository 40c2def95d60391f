// The HTTPS admission endpoint: decodes an AdmissionReview, asks for a decision, encodes the
// response. Certificates can be swapped while serving (renewal) without dropping connections.
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { AdmissionRequest, Decision } from './admission.ts';

/** One admission endpoint: its decision, and what to answer when that decision fails. */
export interface WebhookRoute {
  decide: (request: AdmissionRequest) => Promise<Decision>;
  /** The denial when `decide` throws (failurePolicy Fail: refuse rather than admit unchecked). */
  failureMessage: string;
}

export interface WebhookServerOptions {
  port: number;
  host?: string;
  /** Admission endpoints by URL path. */
  routes: Record<string, WebhookRoute>;
  log: (
    level: 'info' | 'warn' | 'error',
    message: string,
    fields?: Record<string, unknown>,
  ) => void;
}

const MAX_BODY = 8 * 1024 * 1024;

export class WebhookServer {
  private server: Server | undefined;

  constructor(private readonly options: WebhookServerOptions) {}

  /** Starts serving with `cert`/`key`; resolves with the port it listens on. */
  start(tls: { cert: string; key: string }): Promise<number> {
    const server = createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
      const path = req.url?.split('?')[0] ?? '';
      const route = Object.hasOwn(this.options.routes, path)
        ? this.options.routes[path]
        : undefined;
      if (req.method !== 'POST' || !route) {
        res.writeHead(404).end();
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BODY) req.destroy();
        else chunks.push(chunk);
      });
      req.on('end', () => {
        void this.respond(route, Buffer.concat(chunks).toString('utf8')).then((body) => {
          res.writeHead(200, { 'content-type': 'application/json' }).end(body);
        });
      });
    });
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port, this.options.host ?? '0.0.0.0', () =>
        resolve((server.address() as AddressInfo).port),
      );
    });
  }

  updateCertificate(tls: { cert: string; key: string }): void {
    this.server?.setSecureContext({ cert: tls.cert, key: tls.key });
  }

  private async respond(route: WebhookRoute, text: string): Promise<string> {
    let review: { apiVersion?: string; kind?: string; request?: AdmissionRequest };
    try {
      review = JSON.parse(text) as typeof review;
    } catch {
      return JSON.stringify({
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        response: {
          uid: '',
          allowed: false,
          status: { code: 400, message: 'malformed AdmissionReview' },
        },
      });
    }
    const request = review.request;
    let decision: Decision;
    try {
      decision = request
        ? await route.decide(request)
        : { allowed: false, message: 'AdmissionReview without a request' };
    } catch (error) {
      // Lookups failed: refuse rather than let an unverified change through (failurePolicy Fail).
      this.options.log('warn', 'admission decision failed', { error: String(error) });
      decision = { allowed: false, message: route.failureMessage };
    }
    if (!decision.allowed) {
      this.options.log('info', 'admission denied', {
        operation: request?.operation,
        kind: request?.kind?.kind,
        namespace: request?.namespace,
        name: request?.name,
        user: request?.userInfo.username,
      });
    }
    return JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: {
        uid: request?.uid ?? '',
        allowed: decision.allowed,
        ...(decision.message ? { status: { code: 403, message: decision.message } } : {}),
        ...(decision.patch
          ? {
              patchType: 'JSONPatch',
              patch: Buffer.from(JSON.stringify(decision.patch)).toString('base64'),
            }
          : {}),
      },
    });
  }

  stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return Promise.resolve();
    return new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}
