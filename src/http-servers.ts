// The operator's plain-HTTP endpoints: health probes (/healthz, /readyz) and Prometheus /metrics,
// each on its own bind address (`:8080`, `127.0.0.1:9090`; `0` disables).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface BindAddress {
  host: string;
  port: number;
}

/** `:8080` → all interfaces; `host:port`; `0` → undefined (disabled). */
export function parseBindAddress(value: string): BindAddress | undefined {
  if (value === '0') return undefined;
  const match = /^(.*):(\d+)$/.exec(value);
  if (!match) throw new Error(`bind address must be [host]:port or 0, got "${value}"`);
  return { host: match[1] || '0.0.0.0', port: Number(match[2]) };
}

function listen(server: Server, address: BindAddress): Promise<Server> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host, () => resolve(server));
  });
}

export function boundPort(server: Server): number {
  return (server.address() as AddressInfo).port;
}

/** `/healthz`: the process serves requests. `/readyz`: caches are synced (`ready()`). */
export function startProbeServer(address: BindAddress, ready: () => boolean): Promise<Server> {
  const server = createServer((req, res) => {
    const path = req.url?.split('?')[0];
    if (path === '/healthz') res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    else if (path === '/readyz') {
      const ok = ready();
      res
        .writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' })
        .end(ok ? 'ok' : 'caches not synced');
    } else res.writeHead(404).end();
  });
  return listen(server, address);
}

export function startMetricsServer(
  address: BindAddress,
  render: () => Promise<{ contentType: string; body: string }>,
): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    render().then(
      ({ contentType, body }) => res.writeHead(200, { 'content-type': contentType }).end(body),
      (error: unknown) => res.writeHead(500).end(String(error)),
    );
  });
  return listen(server, address);
}

export function closeServer(server: Server | undefined): Promise<void> {
  if (!server) return Promise.resolve();
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
