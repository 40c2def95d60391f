// The discovery cache: a kind it saw stays cached (no request per lookup), and resourceNow asks
// the API server again, so a kind whose CRD was deleted is reported as not served.
import { describe, expect, it } from 'vitest';
import { ClusterError } from '../reconcile/cluster-port.ts';
import { Discovery } from './discovery.ts';
import type { KubeHttp } from './http.ts';

/** An API server whose group version `widgets.example/v1` serves Widget until `served` is false. */
function fakeServer(): { http: KubeHttp; served: { value: boolean }; requests: string[] } {
  const served = { value: true };
  const requests: string[] = [];
  const http = {
    request: ({ path }: { path: string }): Promise<unknown> => {
      requests.push(path);
      if (!served.value) return Promise.reject(new ClusterError('NotFound', 'HTTP 404'));
      return Promise.resolve({
        resources: [{ name: 'widgets', kind: 'Widget', namespaced: true }],
      });
    },
  } as unknown as KubeHttp;
  return { http, served, requests };
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
});
