// The operator's informer caches of TemplateInstances, Templates and Namespaces, with the
// secondary indexes lookups go through (instances by the Template they name, and by namespace),
// behind the reconcilers' CacheReader.
import type { ObjectHead } from '../api/object-meta.ts';
import type { Template, TemplateRevision } from '../api/template.ts';
import type { TemplateInstance } from '../api/template-instance.ts';
import {
  GROUP,
  LABEL_INSTANCE_SET,
  TEMPLATE_INSTANCE_PLURAL,
  TEMPLATE_PLURAL,
  TEMPLATE_REVISION_PLURAL,
  VERSION,
} from '../api/well-known.ts';
import { templateRefOf } from '../engine/template-ref.ts';
import type { Informer } from '../framework/informer.ts';
import type { EventHandler, OperatorShell } from '../framework/operator-shell.ts';
import type { CacheReader } from '../reconcile/reader.ts';

const BY_TEMPLATE = 'template';
const BY_NAMESPACE = 'namespace';
const BY_SET = 'instance-set';

function templateKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/** The object from whichever informer (one per watched namespace) holds it. */
function firstHit<T extends ObjectHead>(
  informers: Informer<T>[],
  namespace: string,
  name: string,
): T | undefined {
  for (const informer of informers) {
    const object = informer.get(namespace, name);
    if (object) return object;
  }
  return undefined;
}

export interface CacheHandlers {
  instance: EventHandler<TemplateInstance>;
  template: EventHandler<Template>;
  revision: EventHandler<TemplateRevision>;
  /** Namespaces are read for their labels only. */
  namespace: EventHandler<ObjectHead>;
}

export class OperatorCaches implements CacheReader {
  private readonly instanceInformers: Informer<TemplateInstance>[] = [];
  private readonly templateInformers: Informer<Template>[] = [];
  private readonly revisionInformers: Informer<TemplateRevision>[] = [];
  private namespaceInformer: Informer<ObjectHead> | undefined;

  /**
   * Starts the informers through the shell: instances and Templates once per watched namespace
   * (`undefined`: one informer across all), Namespaces cluster-wide.
   */
  watch(shell: OperatorShell, namespaces: string[] | undefined, handlers: CacheHandlers): void {
    for (const namespace of namespaces ?? [undefined]) {
      const instances = shell.watch<TemplateInstance>(
        { group: GROUP, version: VERSION, plural: TEMPLATE_INSTANCE_PLURAL, namespace },
        handlers.instance,
      );
      instances.addIndex(BY_TEMPLATE, (instance) => {
        const ref = templateRefOf(instance);
        return [templateKey(ref.namespace, ref.name)];
      });
      instances.addIndex(BY_NAMESPACE, (instance) => [instance.metadata.namespace ?? '']);
      instances.addIndex(BY_SET, (i) =>
        [i.metadata.labels?.[LABEL_INSTANCE_SET] ?? ''].filter(Boolean),
      );
      this.instanceInformers.push(instances);
      this.templateInformers.push(
        shell.watch<Template>(
          { group: GROUP, version: VERSION, plural: TEMPLATE_PLURAL, namespace },
          handlers.template,
        ),
      );
      const revisions = shell.watch<TemplateRevision>(
        { group: GROUP, version: VERSION, plural: TEMPLATE_REVISION_PLURAL, namespace },
        handlers.revision,
      );
      revisions.addIndex(BY_TEMPLATE, (revision) => [
        templateKey(revision.metadata.namespace ?? '', revision.spec.template),
      ]);
      this.revisionInformers.push(revisions);
    }
    this.namespaceInformer = shell.watch<ObjectHead>(
      { group: '', version: 'v1', plural: 'namespaces' },
      handlers.namespace,
    );
  }

  namespaceLabels(name: string): Record<string, string> | undefined {
    return this.namespaceInformer?.get('', name)?.metadata.labels;
  }

  instancesOf(templateNamespace: string, templateName: string): TemplateInstance[] {
    const key = templateKey(templateNamespace, templateName);
    return this.instanceInformers.flatMap((i) => i.byIndex(BY_TEMPLATE, key));
  }

  /** The instances in one namespace. */
  instancesIn(namespace: string): TemplateInstance[] {
    return this.instanceInformers.flatMap((i) => i.byIndex(BY_NAMESPACE, namespace));
  }

  /** Instances labelled as stamped by the TemplateInstanceSet of this name (ADR 0014). */
  instancesOfSet(setName: string): TemplateInstance[] {
    return this.instanceInformers.flatMap((i) => i.byIndex(BY_SET, setName));
  }

  instance(namespace: string, name: string): TemplateInstance | undefined {
    return firstHit(this.instanceInformers, namespace, name);
  }

  /** Every namespace as the cache has it (labels and annotations). */
  namespaces(): ObjectHead[] {
    return this.namespaceInformer?.list() ?? [];
  }

  instances(): TemplateInstance[] {
    return this.instanceInformers.flatMap((i) => i.list());
  }

  templates(): Template[] {
    return this.templateInformers.flatMap((i) => i.list());
  }

  /** The TemplateRevisions of one Template that the cache holds, in no particular order. */
  revisionsOf(templateNamespace: string, templateName: string): TemplateRevision[] {
    const key = templateKey(templateNamespace, templateName);
    return this.revisionInformers.flatMap((i) => i.byIndex(BY_TEMPLATE, key));
  }

  template(namespace: string, name: string): Template | undefined {
    return firstHit(this.templateInformers, namespace, name);
  }
}
