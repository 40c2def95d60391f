// The discovery cache: a kind it saw stays cached (no request per lookup), and resourceNow asks
// the API server again, so a kind whose CRD was deleted is reported as not served.
import { describe, expect, it } from 'vitest';
import { ClusterError } from '../reconcile/cluster-port.ts';
import { Discovery } from './discovery.ts';
import type { KubeHttp } from './http.ts';

/** An API server whose group version `widgets.example/v1` serves Widget until `served` is false. */
function fakeServer(): {
  http: KubeHttp;
  served: { value: boolean };
  down: { value: boolean };
  requests: string[];
} {
  const served = { value: true };
  const down = { value: false };
  const requests: string[] = [];
  const http = {
    request: ({ path }: { path: string }): Promise<unknown> => {
      requests.push(path);
      if (down.value) return Promise.reject(new ClusterError('Transient', 'HTTP 503', 503));
      if (!served.value) return Promise.reject(new ClusterError('NotFound', 'HTTP 404'));
      return Promise.resolve({
        resources: [{ name: 'widgets', kind: 'Widget', namespaced: true }],
      });
    },
  } as unknown as KubeHttp;
  return { http, served, down, requests };
}

describe('Discovery', () => {
  it('answers a kind it has seen from its cache, even after the kind is gone', async () => {
    const server = fakeServer();
    const discovery = new Discovery(server.http);
    expect(await discovery.resourceFor('widgets.example/v1', 'Widget')).toEqual({
      plural: 'widgets',
      scope: 'Namespaced',
    });
    server.served.value = false;
    expect(await discovery.resourceFor('widgets.example/v1', 'Widget')).toBeDefined();
    expect(server.requests).toHaveLength(1);
  });

  it('asks again on resourceNow, and then knows the kind is not served', async () => {
    const server = fakeServer();
    const discovery = new Discovery(server.http);
    await discovery.resourceFor('widgets.example/v1', 'Widget');
    server.served.value = false;
    expect(await discovery.resourceNow('widgets.example/v1', 'Widget')).toBeUndefined();
    expect(await discovery.resourceFor('widgets.example/v1', 'Widget')).toBeUndefined();
    expect(server.requests).toHaveLength(2);
  });

  it('during an outage, asks once per backoff step however many passes want the same document', async () => {
    const server = fakeServer();
    const clock = { now: 0 };
    const discovery = new Discovery(server.http, 5_000, () => clock.now);
    server.down.value = true;
    const lookups = (): Promise<unknown>[] =>
      Array.from({ length: 50 }, () =>
        discovery.resourceFor('widgets.example/v1', 'Widget').catch((e: unknown) => e),
      );
    for (const outcome of await Promise.all(lookups()))
      expect(outcome).toBeInstanceOf(ClusterError);
    expect(server.requests).toHaveLength(1);
    clock.now += 500; // within the first backoff (640-800 ms): the failure is answered again
    await Promise.all(lookups());
    expect(server.requests).toHaveLength(1);
    clock.now += 300;
    await Promise.all(lookups());
    expect(server.requests).toHaveLength(2);
    server.down.value = false;
    clock.now += 1_600;
    expect(await discovery.resourceFor('widgets.example/v1', 'Widget')).toBeDefined();
    expect(server.requests).toHaveLength(3);
  });
});
