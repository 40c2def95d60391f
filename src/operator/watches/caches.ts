// The operator's informer caches, one KindCache per kind its controllers reconcile or route from
// (TemplateInstances, Templates, TemplateRevisions, TemplateInstanceSets, Namespaces), with the
// secondary indexes lookups go through (instances by the Template they name, by namespace and by
// the Set that stamped them; revisions by their Template), behind the reconcilers' CacheReader.
import type { KubeObject, ObjectHead } from '../../api/object-meta.ts';
import type { Template, TemplateRevision } from '../../api/template.ts';
import type { TemplateInstance } from '../../api/template-instance.ts';
import type { TemplateInstanceSet } from '../../api/template-instance-set.ts';
import {
  GROUP,
  LABEL_INSTANCE_SET,
  TEMPLATE_INSTANCE_PLURAL,
  TEMPLATE_INSTANCE_SET_PLURAL,
  TEMPLATE_PLURAL,
  TEMPLATE_REVISION_PLURAL,
  VERSION,
} from '../../api/well-known.ts';
import { parseInstanceKeyName, publishedKindOf } from '../../engine/shared/instance-key.ts';
import { templateRefOf } from '../../engine/shared/template-ref.ts';
import { PublishedKinds } from './published-kinds.ts';
import { KindCache } from '../../framework/controller.ts';
import type { OperatorShell } from '../../framework/watches/operator-shell.ts';
import type { CacheReader } from '../../reconcile/reader.ts';

const BY_TEMPLATE = 'template';
const BY_NAMESPACE = 'namespace';
const BY_SET = 'instance-set';

function templateKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

export class OperatorCaches implements CacheReader {
  /** The kinds Templates publish, each with its informers while its CRD is there (ADR 0032). */
  readonly published = new PublishedKinds();
  readonly kinds = {
    instances: new KindCache<TemplateInstance>({
      group: GROUP,
      version: VERSION,
      plural: TEMPLATE_INSTANCE_PLURAL,
      namespaced: true,
      indexes: {
        [BY_TEMPLATE]: (instance) => {
          const ref = templateRefOf(instance);
          return [templateKey(ref.namespace, ref.name)];
        },
        [BY_NAMESPACE]: (instance) => [instance.metadata.namespace ?? ''],
        [BY_SET]: (i) => [i.metadata.labels?.[LABEL_INSTANCE_SET] ?? ''].filter(Boolean),
      },
    }),
    templates: new KindCache<Template>({
      group: GROUP,
      version: VERSION,
      plural: TEMPLATE_PLURAL,
      namespaced: true,
    }),
    revisions: new KindCache<TemplateRevision>({
      group: GROUP,
      version: VERSION,
      plural: TEMPLATE_REVISION_PLURAL,
      namespaced: true,
      indexes: {
        [BY_TEMPLATE]: (revision) => [
          templateKey(revision.metadata.namespace ?? '', revision.spec.template),
        ],
      },
    }),
    /** Cluster-scoped (ADR 0014): one informer whatever the operator watches. */
    sets: new KindCache<TemplateInstanceSet>({
      group: GROUP,
      version: VERSION,
      plural: TEMPLATE_INSTANCE_SET_PLURAL,
      namespaced: false,
    }),
    /** Namespaces are read for their labels and annotations only. */
    namespaces: new KindCache<ObjectHead>({
      group: '',
      version: 'v1',
      plural: 'namespaces',
      namespaced: false,
    }),
  };

  /**
   * Starts the informers through the shell: the namespaced kinds once per watched namespace
   * (`undefined`: one informer across all), the others cluster-wide.
   */
  watch(shell: OperatorShell, namespaces: string[] | undefined): void {
    for (const kind of Object.values(this.kinds)) kind.watch(shell, namespaces);
  }

  namespaceLabels(name: string): Record<string, string> | undefined {
    return this.kinds.namespaces.get('', name)?.metadata.labels;
  }

  instancesOf(templateNamespace: string, templateName: string): TemplateInstance[] {
    const own = this.kinds.instances.byIndex(
      BY_TEMPLATE,
      templateKey(templateNamespace, templateName),
    );
    const typed = this.published.of(templateNamespace, templateName);
    return typed.length === 0 ? own : [...own, ...typed.flatMap((k) => k.list())];
  }

  /** The instances in one namespace, typed ones included. */
  instancesIn(namespace: string): TemplateInstance[] {
    const own = this.kinds.instances.byIndex(BY_NAMESPACE, namespace);
    const typed = this.published.all();
    return typed.length === 0 ? own : [...own, ...typed.flatMap((k) => k.in(namespace))];
  }

  /** Instances labelled as stamped by the TemplateInstanceSet of this name (ADR 0014). */
  instancesOfSet(setName: string): TemplateInstance[] {
    return this.kinds.instances.byIndex(BY_SET, setName);
  }

  /** `name` is the name part of an instance key: a typed instance's names its kind (ADR 0032). */
  instance(namespace: string, name: string): TemplateInstance | undefined {
    const key = parseInstanceKeyName(name);
    if (key.kind === undefined) return this.kinds.instances.get(namespace, name);
    return this.published.get(key.kind)?.get(namespace, key.name);
  }

  /** The kinds a Template publishes, each with how many instances the cache holds. */
  publishedBy(namespace: string, name: string): { crdName: string; instances: number }[] {
    return this.published.of(namespace, name).map((kind) => ({
      crdName: kind.crdName,
      instances: kind.cache.list().length,
    }));
  }

  readInstance(object: KubeObject): TemplateInstance | undefined {
    const kind = publishedKindOf(object);
    if (kind === undefined) return object as unknown as TemplateInstance;
    return this.published.get(kind)?.view(object);
  }

  /** The apiVersion and kind of a typed instance's key name, while its kind is published. */
  instanceKind(name: string): { apiVersion: string; kind: string } | undefined {
    const key = parseInstanceKeyName(name);
    const kind = key.kind === undefined ? undefined : this.published.get(key.kind);
    return kind && { apiVersion: kind.apiVersion, kind: kind.spec.kind };
  }

  /** Every namespace as the cache has it (labels and annotations). */
  namespaces(): ObjectHead[] {
    return this.kinds.namespaces.list();
  }

  instances(): TemplateInstance[] {
    const own = this.kinds.instances.list();
    const typed = this.published.all();
    return typed.length === 0 ? own : [...own, ...typed.flatMap((k) => k.list())];
  }

  templates(): Template[] {
    return this.kinds.templates.list();
  }

  /** The TemplateRevisions of one Template that the cache holds, in no particular order. */
  revisionsOf(templateNamespace: string, templateName: string): TemplateRevision[] {
    return this.kinds.revisions.byIndex(BY_TEMPLATE, templateKey(templateNamespace, templateName));
  }

  template(namespace: string, name: string): Template | undefined {
    return this.kinds.templates.get(namespace, name);
  }
}
