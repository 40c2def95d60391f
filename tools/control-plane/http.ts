// A minimal HTTPS client for the harness: bearer token + the server's own CA. Kept free of
// @kubernetes/client-node so the harness works before (and independently of) our kube layer.
import { request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';

export interface Endpoint {
  server: string;
  token: string;
  /** PEM bundle to trust; omitted only for probes before the server wrote its certificate. */
  ca?: string;
}

export interface Response {
  status: number;
  body: string;
}

export function send(
  endpoint: Endpoint,
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<Response> {
  const url = new URL(path, endpoint.server);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const isHttps = url.protocol === 'https:';
  const doRequest = isHttps ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = doRequest(
      url,
      {
        method,
        headers: {
          ...(endpoint.token ? { authorization: `Bearer ${endpoint.token}` } : {}),
          ...(payload ? { 'content-type': contentType } : {}),
          accept: 'application/json',
        },
        ...(isHttps ? { ca: endpoint.ca, rejectUnauthorized: endpoint.ca !== undefined } : {}),
        timeout: 10_000,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timed out`)));
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}
