// A TLS proxy between the operator and the real API server that can play the outages a control
// plane has: connections refused, a TLS handshake that fails, every request answered 503, 500
// or 429 with Retry-After, a server that hangs, and one that answers slowly. It counts every
// request and TLS handshake it sees, so a scenario can say what the operator sent while the
// fault lasted. Requests it passes go upstream unchanged (credentials included), watches stream.
import { readFileSync, writeFileSync } from 'node:fs';
import {
  Agent,
  createServer as createHttpsServer,
  request as httpsRequest,
  type Server as HttpsServer,
} from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createNetServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { renewBundle } from '../../../../src/webhook/certificates.ts';
import type { ControlPlane } from '../../../../tools/control-plane/control-plane.ts';

export type Fault =
  | { kind: 'none' }
  /** Nothing listens: every connection is refused. */
  | { kind: 'refused' }
  /** The server presents a certificate the operator's CA did not sign. */
  | { kind: 'tls' }
  /** Every request is answered with `status` (and `retryAfter` seconds, if given). */
  | { kind: 'status'; status: number; retryAfter?: number }
  /** Open streams stall and new requests are never answered, until the fault ends. */
  | { kind: 'hang' }
  /** Every request is answered `delayMs` late. */
  | { kind: 'slow'; delayMs: number };

/** One request the proxy received. */
export interface Seen {
  at: number;
  method: string;
  path: string;
  watch: boolean;
}

export class FaultProxy {
  /** Every request received, in order. */
  readonly seen: Seen[] = [];
  /** TLS connections offered the wrong certificate (each a failed handshake). */
  readonly badHandshakes: number[] = [];
  private fault: Fault = { kind: 'none' };
  private readonly sockets = new Set<Socket>();
  /** Requests held by a hang, answered (by cutting them) when it ends. */
  private readonly held = new Set<ServerResponse>();
  private readonly listener: Server;
  private readonly good: HttpsServer;
  private readonly bad: HttpsServer;
  private readonly upstream: URL;
  private readonly agent: Agent;
  private readonly caCert: string;

  private constructor(
    plane: ControlPlane,
    readonly port: number,
  ) {
    this.upstream = new URL(plane.server);
    this.agent = new Agent({ keepAlive: true, ca: plane.ca });
    const serving = renewBundle(undefined, ['127.0.0.1'], new Date()).bundle;
    const stranger = renewBundle(undefined, ['127.0.0.1'], new Date()).bundle;
    this.caCert = serving.caCert;
    this.good = createHttpsServer({ cert: serving.cert, key: serving.key }, (req, res) =>
      this.handle(req, res),
    );
    this.bad = createHttpsServer({ cert: stranger.cert, key: stranger.key }, (_req, res) =>
      res.destroy(),
    );
    this.bad.on('tlsClientError', () => this.badHandshakes.push(Date.now()));
    this.listener = createNetServer((socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => undefined);
      (this.fault.kind === 'tls' ? this.bad : this.good).emit('connection', socket);
    });
  }

  /** Starts a proxy for `plane` on a free loopback port. */
  static async start(plane: ControlPlane): Promise<FaultProxy> {
    const probe = createNetServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const proxy = new FaultProxy(plane, port);
    await proxy.listen();
    return proxy;
  }

  private listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.listener.once('error', reject);
      this.listener.listen(this.port, '127.0.0.1', () => {
        this.listener.off('error', reject);
        resolve();
      });
    });
  }

  /**
   * A kubeconfig like `plane`'s admin one (its token) that reaches the API server through this
   * proxy; written beside it.
   */
  kubeconfig(plane: ControlPlane): string {
    const config = parse(readFileSync(plane.kubeconfigPath, 'utf8')) as {
      clusters: { cluster: Record<string, string> }[];
    };
    for (const { cluster } of config.clusters) {
      cluster.server = `https://127.0.0.1:${this.port}`;
      cluster['certificate-authority-data'] = Buffer.from(this.caCert).toString('base64');
    }
    const path = join(plane.runDir, `proxy-${this.port}.kubeconfig`);
    writeFileSync(path, stringify(config));
    return path;
  }

  /** Requests seen since `since` (ms since the epoch). */
  since(since: number): Seen[] {
    return this.seen.filter((s) => s.at >= since);
  }

  /**
   * Puts `fault` in place. An outage begins with the connections it has cut (a restarted or
   * crashed API server); a slow server and a hang keep them (a hang stalls them).
   */
  async set(fault: Fault): Promise<void> {
    const before = this.fault;
    this.fault = fault;
    if (before.kind === 'refused' && fault.kind !== 'refused') await this.listen();
    if (before.kind === 'hang' && fault.kind !== 'hang') this.cutAll();
    if (fault.kind === 'refused') {
      await new Promise<void>((resolve) => {
        this.listener.close(() => resolve());
        this.cutAll();
      });
    } else if (fault.kind === 'tls' || fault.kind === 'status') this.cutAll();
  }

  /** Ends every connection and every held request: what a server restart does to its clients. */
  private cutAll(): void {
    for (const res of this.held) res.destroy();
    this.held.clear();
    for (const socket of this.sockets) socket.destroy();
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'https://proxy');
    this.seen.push({
      at: Date.now(),
      method: req.method ?? 'GET',
      path: url.pathname,
      watch: url.searchParams.get('watch') === 'true',
    });
    const fault = this.fault;
    if (fault.kind === 'status') {
      req.resume();
      const body = JSON.stringify({
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        message: `the fault proxy answers ${fault.status}`,
        code: fault.status,
      });
      res.writeHead(fault.status, {
        'content-type': 'application/json',
        ...(fault.retryAfter === undefined ? {} : { 'retry-after': String(fault.retryAfter) }),
      });
      res.end(body);
      return;
    }
    if (fault.kind === 'hang') {
      this.held.add(res);
      res.on('close', () => this.held.delete(res));
      return;
    }
    if (fault.kind === 'slow') setTimeout(() => this.forward(req, res), fault.delayMs);
    else this.forward(req, res);
  }

  /** Sends the request upstream and streams the answer back; a hang stalls the stream. */
  private forward(req: IncomingMessage, res: ServerResponse): void {
    const upstream = httpsRequest(
      {
        protocol: 'https:',
        hostname: this.upstream.hostname,
        port: this.upstream.port,
        path: req.url,
        method: req.method,
        headers: { ...req.headers, host: this.upstream.host },
        agent: this.agent,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        // A watch's headers go at once, as the API server sends them, not with its first event.
        res.flushHeaders();
        answer.on('data', (chunk: Buffer) => {
          // A hang swallows what a stalled stream would have brought: the watch goes silent.
          if (this.fault.kind === 'hang') return;
          res.write(chunk);
        });
        answer.on('end', () => res.end());
        answer.on('error', () => res.destroy());
      },
    );
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  }

  async stop(): Promise<void> {
    this.cutAll();
    this.agent.destroy();
    await new Promise<void>((resolve) => this.listener.close(() => resolve()));
  }
}
