// An in-memory SourcePort over a set of objects: what `stencil render --objects` resolves
// against, and the fake cluster of unit tests. CRDs among the objects declare their kinds' scope.
import type { KubeObject } from '../api/object-meta.ts';
import { builtinScope, groupOf } from './resource-scope.ts';
import type {
  KindScope,
  ListRef,
  ObjectList,
  ObjectRef,
  SourcePort,
  SourceRead,
} from './source-port.ts';
import { describeRef } from './source-port.ts';

interface CrdShape {
  spec?: { group?: string; scope?: string; names?: { kind?: string } };
}

export class MemorySource implements SourcePort {
  private readonly scopes = new Map<string, KindScope>();

  constructor(private readonly objects: readonly KubeObject[]) {
    for (const o of objects) {
      if (o.kind !== 'CustomResourceDefinition') continue;
      const spec = (o as CrdShape).spec;
      if (spec?.group && spec.names?.kind) {
        this.scopes.set(
          `${spec.group}/${spec.names.kind}`,
          spec.scope === 'Cluster' ? 'Cluster' : 'Namespaced',
        );
      }
    }
  }

  scopeOf(apiVersion: string, kind: string): Promise<KindScope | undefined> {
    return Promise.resolve(
      this.scopes.get(`${groupOf(apiVersion)}/${kind}`) ?? builtinScope(apiVersion, kind),
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
