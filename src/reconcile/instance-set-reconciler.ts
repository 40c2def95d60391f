// Reconciles one TemplateInstanceSet (ADR 0014): gathers the Set, its Template, the namespaces
// and the instances it stamped from the caches, lets the engine plan, then stamps instances by
// server-side apply (a field manager of its own), deletes or releases the ones whose namespace
// no longer matches, and writes the counts and the Ready condition.
import type { JsonValue, KubeObject } from '../api/object-meta.ts';
import type { Template } from '../api/template.ts';
import type { TemplateInstance } from '../api/template-instance.ts';
import type {
  TemplateInstanceSet,
  TemplateInstanceSetStatus,
} from '../api/template-instance-set.ts';
import {
  API_VERSION,
  TEMPLATE_INSTANCE_KIND,
  TEMPLATE_INSTANCE_SET_KIND,
  TEMPLATE_KIND,
} from '../api/well-known.ts';
import { canonicalJson } from '../engine/shared/canonical-json.ts';
import { mergeConditions, rfc3339 } from '../engine/shared/conditions.ts';
import {
  exactSpec,
  planSet,
  releasedInstance,
  stampedBy,
  type NamespaceView,
  type SetPlan,
} from '../engine/instance-sets/instance-set.ts';
import type { Reconciler, Request, Result } from '../framework/reconciler.ts';
import type { ClusterPort } from './cluster-port.ts';
import type { ReconcileLog } from './reader.ts';
import { writeStatusIfChanged } from './status-writes.ts';

/** What the Set reconciler reads from the operator's caches. */
export interface InstanceSetCache {
  /** The namespaces this operator manages, with labels and override annotations. */
  namespaces(): NamespaceView[];
  /** Instances labelled as stamped by the Set of this name. */
  instancesOfSet(setName: string): TemplateInstance[];
  /** One instance as the cache has it. */
  instance(namespace: string, name: string): TemplateInstance | undefined;
}

export interface InstanceSetReconcilerDeps {
  /** Reads, status writes and deletes (field manager `stencil`). */
  cluster: ClusterPort;
  /** Server-side apply of stamped instances, under the Set's own field manager. */
  stamper: ClusterPort;
  cache: InstanceSetCache;
  now: () => Date;
  log: ReconcileLog;
}

/** How soon to look again when the cache was behind the API server (a write was skipped). */
export const STALE_CACHE_REQUEUE_MS = 1_000;

interface Pass {
  cluster: ClusterPort;
  stamper: ClusterPort;
  set: TemplateInstanceSet;
  /** Writes skipped because the live object was not what the cache said. */
  skipped: number;
  errors: string[];
}

const instanceId = (
  i: TemplateInstance,
): { apiVersion: string; kind: string; name: string; namespace?: string } => ({
  apiVersion: API_VERSION,
  kind: TEMPLATE_INSTANCE_KIND,
  name: i.metadata.name ?? '',
  namespace: i.metadata.namespace,
});

const asObject = (instance: TemplateInstance): KubeObject => instance as unknown as KubeObject;

/**
 * The apply body, conditional on the live object's resourceVersion when there is one: should
 * someone change it (drop the Set's label) after the check, the apply fails with a Conflict
 * instead of taking it over.
 */
function conditional(body: TemplateInstance, live: TemplateInstance | undefined): KubeObject {
  const resourceVersion = live?.metadata.resourceVersion;
  if (!resourceVersion) return asObject(body);
  return asObject({ ...body, metadata: { ...body.metadata, resourceVersion } });
}

export class InstanceSetReconciler implements Reconciler {
  constructor(private readonly deps: InstanceSetReconcilerDeps) {}

  async reconcile(request: Request, signal: AbortSignal): Promise<Result> {
    const cluster = this.deps.cluster.bind(signal);
    const set = (await cluster.get({
      apiVersion: API_VERSION,
      kind: TEMPLATE_INSTANCE_SET_KIND,
      name: request.name,
    })) as TemplateInstanceSet | undefined;
    // Gone, or going: the garbage collector removes its instances through their ownerReference.
    if (!set || set.metadata.deletionTimestamp) return {};
    const ref = set.spec.template.spec.templateRef;
    const template = (await cluster.get({
      apiVersion: API_VERSION,
      kind: TEMPLATE_KIND,
      name: ref.name,
      namespace: ref.namespace,
    })) as Template | undefined;
    const plan = planSet({
      set,
      template,
      namespaces: this.deps.cache.namespaces(),
      stamped: this.deps.cache.instancesOfSet(set.metadata.name ?? ''),
      existing: (namespace, name) => this.deps.cache.instance(namespace, name),
    });
    const pass: Pass = {
      cluster,
      stamper: this.deps.stamper.bind(signal),
      set,
      skipped: 0,
      errors: [],
    };
    for (const instance of plan.apply) await this.stamp(pass, instance);
    for (const instance of plan.remove) await this.remove(pass, instance, plan.release);
    await this.writeStatus(pass, plan);
    if (pass.errors.length > 0)
      throw new Error(`TemplateInstanceSet ${request.name}: ${pass.errors.join('; ')}`);
    return pass.skipped > 0 ? { requeueAfter: STALE_CACHE_REQUEUE_MS } : {};
  }

  /**
   * The live instance, or null when there is none: either way one this Set may write; undefined
   * when it exists and is not the Set's (the cache was behind).
   */
  private async writable(
    pass: Pass,
    instance: TemplateInstance,
  ): Promise<TemplateInstance | null | undefined> {
    const live = (await pass.cluster.get(instanceId(instance))) as TemplateInstance | undefined;
    if (!live) return null;
    if (stampedBy(live, pass.set)) return live;
    pass.skipped++;
    return undefined;
  }

  private async stamp(pass: Pass, instance: TemplateInstance): Promise<void> {
    const where = `${instance.metadata.namespace ?? ''}/${instance.metadata.name ?? ''}`;
    try {
      // The cache may be behind: an instance someone else just created is never taken over.
      const live = await this.writable(pass, instance);
      if (live === undefined) return;
      const applied = (await pass.stamper.apply(
        conditional(instance, live ?? undefined),
      )) as unknown as TemplateInstance;
      // What someone else added to the spec (a parameter the Set does not list, a pinned
      // revision) outlives the apply: the Set's spec is the whole spec, or a tenant with `edit`
      // could set any parameter of the instance the platform placed in their namespace.
      if (canonicalJson(applied.spec) !== canonicalJson(instance.spec))
        await pass.stamper.patchSpec(
          asObject(applied),
          exactSpec(applied.spec, instance.spec as unknown as JsonValue) as Record<string, unknown>,
        );
      this.deps.log('info', 'stamped instance', { set: pass.set.metadata.name, instance: where });
    } catch (error) {
      pass.errors.push(`stamping ${where}: ${(error as Error).message}`);
    }
  }

  private async remove(pass: Pass, instance: TemplateInstance, release: boolean): Promise<void> {
    const where = `${instance.metadata.namespace ?? ''}/${instance.metadata.name ?? ''}`;
    try {
      const live = (await pass.cluster.get(instanceId(instance))) as TemplateInstance | undefined;
      if (!live || !stampedBy(live, pass.set)) return;
      if (release) await pass.stamper.apply(conditional(releasedInstance(live), live));
      // Only the instance just checked, unchanged since: one whose label was dropped meanwhile
      // makes the delete fail with a Conflict (retried) instead.
      else
        await pass.cluster.delete(
          { ...instanceId(live), uid: live.metadata.uid },
          { resourceVersion: live.metadata.resourceVersion },
        );
      this.deps.log('info', release ? 'released instance' : 'deleted instance', {
        set: pass.set.metadata.name,
        instance: where,
      });
    } catch (error) {
      pass.errors.push(
        `${release ? 'releasing' : 'deleting'} ${where}: ${(error as Error).message}`,
      );
    }
  }

  private async writeStatus(pass: Pass, plan: SetPlan): Promise<void> {
    const { set } = pass;
    const generation = set.metadata.generation;
    // A blocked Set keeps its last counts: nothing was changed, so they still hold.
    const counts = plan.status.desired === undefined ? countsOf(set.status) : plan.status;
    const status: TemplateInstanceSetStatus = {
      observedGeneration: generation,
      ...counts,
      conditions: mergeConditions(
        set.status?.conditions,
        [plan.ready],
        rfc3339(this.deps.now()),
        generation,
      ),
    };
    await writeStatusIfChanged(pass.cluster, set, status);
  }
}

function countsOf(status: TemplateInstanceSetStatus | undefined): TemplateInstanceSetStatus {
  if (!status) return {};
  const { desired, ready, failed, failingNamespaces } = status;
  return JSON.parse(
    JSON.stringify({ desired, ready, failed, failingNamespaces }),
  ) as TemplateInstanceSetStatus;
}
