// Raw JSON requests to the API server. Bodies are sent exactly as given (no client model
// serializer may drop fields such as NetworkPolicy `from` or CRD `default`), over one
// keep-alive agent (watches on their own), with credentials from the KubeConfig applied to every
// request, a client-side rate limit, and the server's Retry-After honoured on 429 and 5xx.
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { createInterface } from 'node:readline';
import {
  Agent as HttpsAgent,
  request as httpsRequest,
  type AgentOptions,
  type RequestOptions,
} from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { errorForAbort, errorForNetwork, errorForResponse, retryAfterMs } from './errors.ts';
import { TokenBucket, type RateLimit } from './rate-limiter.ts';

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

/** Credentials from the kubeconfig (bearer token or basic auth) plus content negotiation. */
function requestHeaders(
  auth: RequestOptions,
  contentType: string | undefined,
): Record<string, string> {
  const headers: Record<string, string> = { accept: 'application/json' };
  for (const [k, v] of Object.entries(auth.headers ?? {})) {
    if (typeof v === 'string') headers[k.toLowerCase()] = v;
  }
  if (auth.auth) headers.authorization = `Basic ${Buffer.from(auth.auth).toString('base64')}`;
  if (contentType) headers['content-type'] = contentType;
  return headers;
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
  private readonly bucket: TokenBucket;

  private constructor(
    private readonly kubeConfig: KubeConfig,
    readonly server: URL,
    tls: AgentOptions,
    rateLimit: RateLimit,
  ) {
    const https = server.protocol === 'https:';
    this.agent = https
      ? new HttpsAgent({ keepAlive: true, maxSockets: 32, ...tls })
      : new HttpAgent({ keepAlive: true, maxSockets: 32 });
    this.streamAgent = https
      ? new HttpsAgent({ keepAlive: true, ...tls })
      : new HttpAgent({ keepAlive: true });
    this.bucket = new TokenBucket(rateLimit);
  }

  static async create(kubeConfig: KubeConfig, rateLimit = UNLIMITED): Promise<KubeHttp> {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    const options: RequestOptions = {};
    await kubeConfig.applyToHTTPSOptions(options);
    const tls: AgentOptions = {
      ca: options.ca,
      cert: options.cert,
      key: options.key,
      ...(cluster.skipTLSVerify ? { rejectUnauthorized: false } : {}),
      ...(cluster.tlsServerName ? { servername: cluster.tlsServerName } : {}),
    };
    return new KubeHttp(kubeConfig, new URL(cluster.server), tls, rateLimit);
  }

  onRequest(listener: RequestListener): void {
    this.listeners.push(listener);
  }

  /** The URL of an API path on this server, with the query parameters that are set. */
  private url(path: string, query: Record<string, string | undefined> = {}): URL {
    const url = new URL(this.server.pathname.replace(/\/$/, '') + path, this.server);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, v);
    return url;
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
      const reply = await this.send(spec);
      if (reply.status >= 200 && reply.status < 300)
        return (reply.body ? JSON.parse(reply.body) : {}) as T;
      const wait = retryAfterMs(reply.status, reply.retryAfter);
      if (wait === undefined || attempt >= MAX_ATTEMPTS)
        throw errorForResponse(reply.status, reply.body);
      await pause(wait, spec);
    }
  }

  /** One attempt of a request: its status, body and Retry-After header. */
  private async send(spec: RequestSpec): Promise<Reply> {
    const auth: RequestOptions = {};
    await this.kubeConfig.applyToHTTPSOptions(auth);
    const url = this.url(spec.path, spec.query);
    const payload = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    const headers = requestHeaders(
      auth,
      payload === undefined ? undefined : (spec.contentType ?? 'application/json'),
    );
    if (payload !== undefined) headers['content-length'] = String(Buffer.byteLength(payload));
    if (spec.accept) headers.accept = spec.accept;
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const dryRun = url.searchParams.get('dryRun') === 'All';
    const reply = await new Promise<Reply>((resolve, reject) => {
      const req = send(
        url,
        {
          method: spec.method,
          headers,
          agent: this.agent,
          timeout: spec.timeoutMs ?? 30_000,
          signal: spec.signal,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const retryAfter: string | string[] | undefined = res.headers['retry-after'];
            resolve({
              status: res.statusCode ?? 0,
              body: Buffer.concat(chunks).toString('utf8'),
              retryAfter: typeof retryAfter === 'string' ? retryAfter : retryAfter?.[0],
            });
          });
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${spec.method} ${spec.path} timed out`)));
      req.on('error', reject);
      if (payload !== undefined) req.write(payload);
      req.end();
    }).catch((error: unknown) => {
      throw spec.signal?.aborted ? errorForAbort(spec) : errorForNetwork(error);
    });
    for (const listener of this.listeners)
      listener(spec.method, spec.path, dryRun, reply.status, url.searchParams);
    return reply;
  }

  /**
   * Opens a watch stream: calls `onLine` with each JSON line, `onDone` once when the stream ends
   * (null after a normal close, the error otherwise, with `statusCode` for HTTP failures).
   */
  async stream(
    spec: { path: string; query: Record<string, string | undefined>; accept?: string },
    onLine: (line: unknown) => void,
    onDone: (error: unknown) => void,
  ): Promise<{ abort(): void }> {
    const auth: RequestOptions = {};
    await this.kubeConfig.applyToHTTPSOptions(auth);
    const url = this.url(spec.path, spec.query);
    const headers = requestHeaders(auth, undefined);
    if (spec.accept) headers.accept = spec.accept;
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    let finished = false;
    const done = (error: unknown): void => {
      if (finished) return;
      finished = true;
      onDone(error);
    };
    const req = send(url, { method: 'GET', headers, agent: this.streamAgent }, (res) => {
      res.on('error', done);
      if (res.statusCode !== 200) {
        res.resume();
        done(
          Object.assign(new Error(`watch ${spec.path}: HTTP ${res.statusCode ?? 0}`), {
            statusCode: res.statusCode,
          }),
        );
        return;
      }
      const lines = createInterface({ input: res, crlfDelay: Infinity });
      lines.on('line', (line) => {
        if (!line) return;
        try {
          onLine(JSON.parse(line));
        } catch {
          // a torn line at a connection drop: the watch restarts from the last resourceVersion
        }
      });
      lines.on('close', () => done(null));
      // readline re-emits the response's errors (an aborted watch): handled like any other end.
      lines.on('error', done);
    });
    req.on('error', done);
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
