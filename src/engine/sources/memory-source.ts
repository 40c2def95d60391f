// An in-memory SourcePort over a set of objects: what `stencil render --objects` resolves
// against, and the fake cluster of unit tests. CRDs among the objects declare their kinds' scope.
import type { KubeObject } from '../../api/object-meta.ts';
import { builtinScope, groupKind, kindsDeclaredBy } from '../objects/resource-scope.ts';
import type {
  KindScope,
  ListRef,
  ObjectList,
  ObjectRef,
  SourcePort,
  SourceRead,
} from './source-port.ts';
import { describeRef } from './source-port.ts';

export class MemorySource implements SourcePort {
  private readonly scopes: Map<string, KindScope>;

  constructor(private readonly objects: readonly KubeObject[]) {
    this.scopes = kindsDeclaredBy(objects);
  }

  scopeOf(apiVersion: string, kind: string): Promise<KindScope | undefined> {
    return Promise.resolve(
      this.scopes.get(groupKind(apiVersion, kind)) ?? builtinScope(apiVersion, kind),
    );
  }

  get(ref: ObjectRef): Promise<SourceRead<KubeObject>> {
    const found = this.objects.find(
      (o) =>
        o.apiVersion === ref.apiVersion &&
        o.kind === ref.kind &&
        o.metadata.name === ref.name &&
        (o.metadata.namespace ?? undefined) === ref.namespace,
    );
    if (found) return Promise.resolve({ ok: true, value: found });
    return Promise.resolve({
      ok: false,
      failure: 'NotFound',
      message: `${describeRef(ref)} not found`,
    });
  }

  list(ref: ListRef): Promise<SourceRead<ObjectList>> {
    const items = this.objects.filter(
      (o) =>
        o.apiVersion === ref.apiVersion &&
        o.kind === ref.kind &&
        (ref.namespace === undefined || o.metadata.namespace === ref.namespace),
    );
    return Promise.resolve({
      ok: true,
      value: { apiVersion: ref.apiVersion, kind: `${ref.kind}List`, items },
    });
  }
}
