// Raw JSON requests to the API server. Bodies are sent exactly as given (no client model
// serializer may drop fields such as NetworkPolicy `from` or CRD `default`), over one
// keep-alive agent (watches on their own), with credentials from the KubeConfig on every
// request, a client-side rate limit, and the server's Retry-After honoured on 429 and 5xx.
//
// Every request of the operator passes here, so the path is kept lean (issue #25: the HTTP stack
// was half of the operator's CPU in a 1,000-instance converge): credentials are worked out once
// (see Credentials), the TLS context is built once and shared by every connection, and watch
// streams are split into lines by hand rather than through readline.
import {
  Agent as HttpAgent,
  request as httpRequest,
  type ClientRequest,
  type IncomingMessage,
  type RequestOptions as HttpRequestOptions,
} from 'node:http';
import {
  Agent as HttpsAgent,
  request as httpsRequest,
  type AgentOptions,
  type RequestOptions,
} from 'node:https';
import { createSecureContext } from 'node:tls';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Impersonation } from '../reconcile/cluster-port.ts';
import { errorForAbort, errorForNetwork, errorForResponse, retryAfterMs } from './errors.ts';
import { TokenBucket, type RateLimit } from './rate-limiter.ts';
import { splitLines } from './line-splitter.ts';

/** Attempts of one request that the server answers with Retry-After (client-go's maxRetries). */
const MAX_ATTEMPTS = 10;

/** No client-side limit: what tests and tools get unless they ask for one. */
export const UNLIMITED: RateLimit = { qps: 0, burst: 1 };

export interface RequestSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | undefined>;
  body?: unknown;
  contentType?: string;
  /** Overrides `application/json`, e.g. to ask for metadata only. */
  accept?: string;
  timeoutMs?: number;
  /** Cancels the request: not sent when already aborted, torn down when aborted in flight. */
  signal?: AbortSignal;
  /** Made as this user (Impersonate-User, Impersonate-Extra-*), not as the kubeconfig's. */
  impersonate?: Impersonation;
}

/**
 * The headers that make a request as `user`. An extra's key is percent-encoded in the header
 * name (a `/` may not appear there); several values are several headers.
 */
export function impersonationHeaders(user: Impersonation): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = { 'impersonate-user': user.username };
  for (const [key, values] of Object.entries(user.extra ?? {}))
    headers[`impersonate-extra-${encodeURIComponent(key)}`] = values;
  return headers;
}

/** Counts requests by method (and dry-run), for tests and metrics. */
export type RequestListener = (
  method: string,
  path: string,
  dryRun: boolean,
  status: number,
  /** The query parameters sent (fieldManager, fieldValidation, hash, ...). */
  query: URLSearchParams,
) => void;

/**
 * Told of every attempt to reach the API server, watches included: the verb (`WATCH` for a watch)
 * and the HTTP status, 0 when no answer came (refused, reset, TLS failure, timeout). Metrics count
 * them, so an outage shows what the operator sent while it lasted.
 */
export type AttemptListener = (verb: string, status: number) => void;

/** The headers a kubeconfig's user adds to a request: a bearer token, basic auth, impersonation. */
function credentialHeaders(auth: RequestOptions): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(auth.headers ?? {})) {
    if (typeof v === 'string') headers[k.toLowerCase()] = v;
  }
  if (auth.auth) headers.authorization = `Basic ${Buffer.from(auth.auth).toString('base64')}`;
  return headers;
}

/**
 * How long the credentials of an exec plugin or auth provider are reused before the kubeconfig
 * is asked again. Those hand out tokens that live for minutes or hours and refresh them
 * themselves; asking per request re-read the CA, certificate and key files and built a new
 * https.Agent every time. Static credentials (a token, a client certificate) are read once.
 */
const DYNAMIC_CREDENTIALS_MS = 10_000;

/** The credentials of the kubeconfig's current user, worked out once and reused. */
class Credentials {
  private headers: Record<string, string> | undefined;
  private readAt = 0;
  private readonly dynamic: boolean;

  constructor(private readonly kubeConfig: KubeConfig) {
    const user = kubeConfig.getCurrentUser();
    this.dynamic = !!(user?.exec || user?.authProvider);
  }

  async current(): Promise<Record<string, string>> {
    const stale = this.dynamic && Date.now() - this.readAt > DYNAMIC_CREDENTIALS_MS;
    if (!this.headers || stale) {
      const auth: RequestOptions = {};
      await this.kubeConfig.applyToHTTPSOptions(auth);
      this.headers = credentialHeaders(auth);
      this.readAt = Date.now();
    }
    return this.headers;
  }

  /** After a 401: the next request asks the kubeconfig again (a rotated token, a new plugin run). */
  forget(): void {
    this.headers = undefined;
  }
}

/** Waits `ms`, or throws the request's abort error as soon as its signal fires. */
function pause(ms: number, spec: RequestSpec): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  const signal = spec.signal;
  // A signal aborted already (e.g. while a 429 came in) fires no 'abort' event again: without
  // this check the wait would run its full Retry-After.
  if (signal?.aborted) return Promise.reject(errorForAbort(spec));
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(errorForAbort(spec));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

interface Reply {
  status: number;
  body: string;
  retryAfter: string | undefined;
}

export class KubeHttp {
  private readonly agent: HttpAgent | HttpsAgent;
  /**
   * Watches hold their connection for as long as they run, so they get an agent without a socket
   * cap: sharing the capped one, 32 watches (16 namespaces × 2 source kinds) starved every
   * request and the operator stalled.
   */
  private readonly streamAgent: HttpAgent | HttpsAgent;
  private readonly listeners: RequestListener[] = [];
  private readonly attemptListeners: AttemptListener[] = [];
  private readonly bucket: TokenBucket;
  private readonly credentials: Credentials;
  private readonly send: typeof httpRequest;
  /** Host, port and path prefix of the server, as every request's options start. */
  private readonly target: { protocol: string; hostname: string; port: string; base: string };

  private constructor(
    kubeConfig: KubeConfig,
    readonly server: URL,
    tls: AgentOptions,
    rateLimit: RateLimit,
  ) {
    const https = server.protocol === 'https:';
    this.send = https ? httpsRequest : httpRequest;
    this.agent = https
      ? new HttpsAgent({ keepAlive: true, maxSockets: 32, ...tls })
      : new HttpAgent({ keepAlive: true, maxSockets: 32 });
    this.streamAgent = https
      ? new HttpsAgent({ keepAlive: true, ...tls })
      : new HttpAgent({ keepAlive: true });
    this.bucket = new TokenBucket(rateLimit);
    this.credentials = new Credentials(kubeConfig);
    this.target = {
      protocol: server.protocol,
      // A bracketed IPv6 literal is a hostname without its brackets for the socket.
      hostname: server.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: server.port,
      base: server.pathname.replace(/\/$/, ''),
    };
  }

  static async create(kubeConfig: KubeConfig, rateLimit = UNLIMITED): Promise<KubeHttp> {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    const options: RequestOptions = {};
    await kubeConfig.applyToHTTPSOptions(options);
    const tls: AgentOptions = {
      // One TLS context for every connection: built per connection, it parsed the CA,
      // certificate and key again each time (a watch restart, a socket the server closed).
      secureContext: createSecureContext({ ca: options.ca, cert: options.cert, key: options.key }),
      ...(cluster.skipTLSVerify ? { rejectUnauthorized: false } : {}),
      ...(cluster.tlsServerName ? { servername: cluster.tlsServerName } : {}),
    };
    return new KubeHttp(kubeConfig, new URL(cluster.server), tls, rateLimit);
  }

  onRequest(listener: RequestListener): void {
    this.listeners.push(listener);
  }

  onAttempt(listener: AttemptListener): void {
    this.attemptListeners.push(listener);
  }

  private tell(verb: string, status: number): void {
    for (const listener of this.attemptListeners) listener(verb, status);
  }

  /** The request options of an API path on this server, with the query parameters that are set. */
  private options(
    method: string,
    path: string,
    query: URLSearchParams,
    headers: Record<string, string | string[]>,
    agent: HttpAgent,
  ): HttpRequestOptions {
    const search = query.size > 0 ? `?${query.toString()}` : '';
    const { protocol, hostname, port, base } = this.target;
    return { protocol, hostname, port, path: base + path + search, method, headers, agent };
  }

  /** The headers of one request: credentials, content negotiation, the body's type and length. */
  private async headers(
    accept: string | undefined,
    payload: string | undefined,
    contentType: string | undefined,
    impersonate?: Impersonation,
  ): Promise<Record<string, string | string[]>> {
    const headers: Record<string, string | string[]> = {
      ...(await this.credentials.current()),
      accept: accept ?? 'application/json',
      ...(impersonate ? impersonationHeaders(impersonate) : {}),
    };
    if (payload !== undefined) {
      headers['content-type'] = contentType ?? 'application/json';
      headers['content-length'] = String(Buffer.byteLength(payload));
    }
    return headers;
  }

  /**
   * Sends a request (after the rate limit allows it); resolves with the parsed JSON body, throws a
   * classified ClusterError. A 429 or 5xx with Retry-After is sent again after that wait, up to
   * MAX_ATTEMPTS times, each attempt passing the rate limit again.
   */
  async request<T>(spec: RequestSpec): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      if (spec.signal?.aborted) throw errorForAbort(spec);
      await pause(this.bucket.reserve(), spec);
      const reply = await this.attempt(spec);
      if (reply.status >= 200 && reply.status < 300)
        return (reply.body ? JSON.parse(reply.body) : {}) as T;
      if (reply.status === 401) this.credentials.forget();
      const wait = retryAfterMs(reply.status, reply.retryAfter);
      if (wait === undefined || attempt >= MAX_ATTEMPTS)
        throw errorForResponse(reply.status, reply.body);
      await pause(wait, spec);
    }
  }

  /** One attempt of a request: its status, body and Retry-After header. */
  private async attempt(spec: RequestSpec): Promise<Reply> {
    const payload = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    const headers = await this.headers(spec.accept, payload, spec.contentType, spec.impersonate);
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(spec.query ?? {})) if (v !== undefined) query.set(k, v);
    const options = this.options(spec.method, spec.path, query, headers, this.agent);
    options.timeout = spec.timeoutMs ?? 30_000;
    const reply = await new Promise<Reply>((resolve, reject) => {
      const req = this.send(options, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => {
          const retryAfter: string | string[] | undefined = res.headers['retry-after'];
          resolve({
            status: res.statusCode ?? 0,
            body,
            retryAfter: typeof retryAfter === 'string' ? retryAfter : retryAfter?.[0],
          });
        });
        res.on('error', reject);
      });
      const detach = tearDownOnAbort(req, spec.signal);
      req.on('close', detach);
      req.on('timeout', () => req.destroy(new Error(`${spec.method} ${spec.path} timed out`)));
      req.on('error', reject);
      req.end(payload);
    }).catch((error: unknown) => {
      if (spec.signal?.aborted) throw errorForAbort(spec);
      this.tell(spec.method, 0);
      throw errorForNetwork(error);
    });
    this.tell(spec.method, reply.status);
    const dryRun = query.get('dryRun') === 'All';
    for (const listener of this.listeners)
      listener(spec.method, spec.path, dryRun, reply.status, query);
    return reply;
  }

  /**
   * Opens a watch stream: calls `onLine` with each JSON line, `onOpen` when the server accepted
   * it (status 200), `onDone` once when the stream ends (null after a normal close, the error
   * otherwise, with `statusCode` for HTTP failures and `retryAfterMs` when a 429 or 5xx said how
   * long to wait). Asked for only when the rate limit allows, as every other request.
   */
  async stream(
    spec: { path: string; query: Record<string, string | undefined>; accept?: string },
    onLine: (line: unknown) => void,
    onDone: (error: unknown) => void,
    onOpen?: () => void,
  ): Promise<{ abort(): void }> {
    await pause(this.bucket.reserve(), { method: 'GET', path: spec.path });
    const headers = await this.headers(spec.accept, undefined, undefined);
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(spec.query)) if (v !== undefined) query.set(k, v);
    let finished = false;
    const done = (error: unknown): void => {
      if (finished) return;
      finished = true;
      onDone(error);
    };
    let responded = false;
    const options = this.options('GET', spec.path, query, headers, this.streamAgent);
    const req = this.send(options, (res: IncomingMessage) => {
      responded = true;
      res.on('error', done);
      const status = res.statusCode ?? 0;
      this.tell('WATCH', status);
      if (status !== 200) {
        if (status === 401) this.credentials.forget();
        res.resume();
        const header = res.headers['retry-after'];
        const retryAfter = retryAfterMs(status, typeof header === 'string' ? header : header?.[0]);
        finished = true;
        onDone(
          Object.assign(new Error(`watch ${spec.path}: HTTP ${status}`), {
            statusCode: status,
            ...(retryAfter === undefined ? {} : { retryAfterMs: retryAfter }),
          }),
        );
        return;
      }
      onOpen?.();
      const lines = splitLines((line) => {
        try {
          onLine(JSON.parse(line));
        } catch {
          // a torn line at a connection drop: the watch restarts from the last resourceVersion
        }
      });
      res.on('data', lines.push);
      res.on('end', () => {
        lines.end();
        done(null);
      });
      // A response torn down (an aborted watch, a dropped connection) ends with 'close' only.
      res.on('close', () => done(res.complete ? null : new Error(`watch ${spec.path} was cut`)));
    });
    req.on('error', (error) => {
      if (!responded && error.name !== 'AbortError') this.tell('WATCH', 0);
      done(error);
    });
    req.end();
    return {
      abort: () => {
        req.destroy(Object.assign(new Error('watch aborted'), { name: 'AbortError' }));
      },
    };
  }

  close(): void {
    this.agent.destroy();
    this.streamAgent.destroy();
  }
}

/**
 * Destroys `req` when `signal` fires while it is in flight; returns the detach to call when the
 * request is over. One listener of our own: Node's `signal` request option did the same through
 * its stream machinery at several times the cost, on every request.
 */
function tearDownOnAbort(req: ClientRequest, signal: AbortSignal | undefined): () => void {
  if (!signal) return () => undefined;
  const onAbort = (): void =>
    void req.destroy(Object.assign(new Error('aborted'), { name: 'AbortError' }));
  if (signal.aborted) {
    onAbort();
    return () => undefined;
  }
  signal.addEventListener('abort', onAbort, { once: true });
  return () => signal.removeEventListener('abort', onAbort);
}
