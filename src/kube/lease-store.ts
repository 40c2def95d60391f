// The leader-election Lease over the API server: GET, POST to create, PUT to update (the
// resourceVersion in the body makes every update conditional: a stale one fails with 409).
import type { Lease, LeaseStore } from '../framework/leader-election.ts';
import { isClusterError } from '../reconcile/cluster-port.ts';
import type { KubeHttp } from './http.ts';

export class KubeLeaseStore implements LeaseStore {
  constructor(
    private readonly http: KubeHttp,
    private readonly namespace: string,
    private readonly name: string,
  ) {}

  private path(name?: string): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.namespace)}/leases${name ? `/${encodeURIComponent(name)}` : ''}`;
  }

  async get(): Promise<Lease | undefined> {
    try {
      return await this.http.request<Lease>({ method: 'GET', path: this.path(this.name) });
    } catch (error) {
      if (isClusterError(error, 'NotFound')) return undefined;
      throw error;
    }
  }

  create(lease: Lease): Promise<Lease> {
    return this.http.request<Lease>({ method: 'POST', path: this.path(), body: lease });
  }

  update(lease: Lease): Promise<Lease> {
    return this.http.request<Lease>({ method: 'PUT', path: this.path(this.name), body: lease });
  }
}
