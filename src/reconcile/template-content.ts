// The Template content an instance renders, read through the operator's caches: the choice is
// the engine's (chooseContent, docs/adr/0012); this file only gathers what it needs, reading a
// Template or a revision the cache has not seen yet.
import type { Template, TemplateRevision } from '../api/template.ts';
import type { TemplateInstance } from '../api/template-instance.ts';
import { API_VERSION, TEMPLATE_KIND, TEMPLATE_REVISION_KIND } from '../api/well-known.ts';
import { templateRefOf } from '../engine/shared/template-ref.ts';
import { revisionName } from '../engine/releases/revisions.ts';
import { memberOf, stagePositions, type RolloutMember } from '../engine/releases/rollout.ts';
import {
  chooseContent,
  type ContentChoice,
  type RolloutView,
} from '../engine/releases/content-choice.ts';
import type { ClusterPort } from './cluster-port.ts';
import type { CacheReader } from './reader.ts';

type Cache = Pick<CacheReader, 'template' | 'revisionsOf' | 'instancesOf' | 'namespaceLabels'>;

/**
 * The content this instance should be on. The operator's cache answers when it has the Template
 * (a newer version than the cache's brings its own event, which re-enqueues every instance that
 * names it); only a Template or a revision the cache has not seen is read.
 */
export async function templateFor(
  cluster: ClusterPort,
  instance: TemplateInstance,
  cache?: Cache,
): Promise<ContentChoice> {
  const ref = templateRefOf(instance);
  const live =
    cache?.template(ref.namespace, ref.name) ??
    ((await cluster.get({ apiVersion: API_VERSION, kind: TEMPLATE_KIND, ...ref })) as
      Template | undefined);
  const revisions = cache?.revisionsOf(ref.namespace, ref.name) ?? [];
  const inputs = { instance, live, revisions, rollout: cache && rolloutView(instance, cache) };
  const choice = chooseContent(inputs);
  if (choice.missingRevision === undefined) return choice;
  const fetched = (await cluster.get({
    apiVersion: API_VERSION,
    kind: TEMPLATE_REVISION_KIND,
    namespace: ref.namespace,
    name: revisionName(ref.name, choice.missingRevision),
  })) as TemplateRevision | undefined;
  return fetched ? chooseContent({ ...inputs, revisions: [...revisions, fetched] }) : choice;
}

/** The rollout's view of the instance from the cache; positions only computed when asked. */
export function rolloutView(instance: TemplateInstance, cache: Cache): RolloutView {
  const member = (): RolloutMember => rolloutMemberOf(instance, cache);
  return {
    member,
    position: (spec) => {
      const { namespace, name } = templateRefOf(instance);
      const members = cache.instancesOf(namespace, name).map((i) => rolloutMemberOf(i, cache));
      return stagePositions(members, spec).get(member().key) ?? -1;
    },
  };
}

/** The rollout's view of an instance, with its namespace's labels from the cache. */
export function rolloutMemberOf(
  instance: TemplateInstance,
  cache: Pick<CacheReader, 'namespaceLabels'>,
): RolloutMember {
  return memberOf(instance, cache.namespaceLabels(instance.metadata.namespace ?? '') ?? {});
}
