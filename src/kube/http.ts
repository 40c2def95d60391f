// Raw JSON requests to the API server. Bodies are sent exactly as given (no client model
// serializer may drop fields such as NetworkPolicy `from` or CRD `default`), over one
// keep-alive agent, with credentials from the KubeConfig applied to every request.
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import {
  Agent as HttpsAgent,
  request as httpsRequest,
  type AgentOptions,
  type RequestOptions,
} from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { errorForNetwork, errorForResponse } from './errors.ts';

export interface RequestSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | undefined>;
  body?: unknown;
  contentType?: string;
  timeoutMs?: number;
}

/** Counts requests by method (and dry-run), for tests and metrics. */
export type RequestListener = (
  method: string,
  path: string,
  dryRun: boolean,
  status: number,
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

export class KubeHttp {
  private readonly agent: HttpAgent | HttpsAgent;
  private readonly listeners: RequestListener[] = [];

  private constructor(
    private readonly kubeConfig: KubeConfig,
    readonly server: URL,
    tls: AgentOptions,
  ) {
    this.agent =
      server.protocol === 'https:'
        ? new HttpsAgent({ keepAlive: true, maxSockets: 32, ...tls })
        : new HttpAgent({ keepAlive: true, maxSockets: 32 });
  }

  static async create(kubeConfig: KubeConfig): Promise<KubeHttp> {
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
    return new KubeHttp(kubeConfig, new URL(cluster.server), tls);
  }

  onRequest(listener: RequestListener): void {
    this.listeners.push(listener);
  }

  /** Sends a request; resolves with the parsed JSON body, throws a classified ClusterError. */
  async request<T>(spec: RequestSpec): Promise<T> {
    const auth: RequestOptions = {};
    await this.kubeConfig.applyToHTTPSOptions(auth);
    const url = new URL(this.server.pathname.replace(/\/$/, '') + spec.path, this.server);
    for (const [k, v] of Object.entries(spec.query ?? {}))
      if (v !== undefined) url.searchParams.set(k, v);
    const payload = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    const headers = requestHeaders(
      auth,
      payload === undefined ? undefined : (spec.contentType ?? 'application/json'),
    );
    if (payload !== undefined) headers['content-length'] = String(Buffer.byteLength(payload));
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const dryRun = url.searchParams.get('dryRun') === 'All';
    const { status, body } = await new Promise<{ status: number; body: string }>(
      (resolve, reject) => {
        const req = send(
          url,
          { method: spec.method, headers, agent: this.agent, timeout: spec.timeoutMs ?? 30_000 },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () =>
              resolve({
                status: res.statusCode ?? 0,
                body: Buffer.concat(chunks).toString('utf8'),
              }),
            );
            res.on('error', reject);
          },
        );
        req.on('timeout', () => req.destroy(new Error(`${spec.method} ${spec.path} timed out`)));
        req.on('error', reject);
        if (payload !== undefined) req.write(payload);
        req.end();
      },
    ).catch((error: unknown) => {
      throw errorForNetwork(error);
    });
    for (const listener of this.listeners) listener(spec.method, spec.path, dryRun, status);
    if (status < 200 || status >= 300) throw errorForResponse(status, body);
    return (body ? JSON.parse(body) : {}) as T;
  }

  close(): void {
    this.agent.destroy();
  }
}
