// One evaluation of an instance against the cluster, shared by its pass and by the preflight of a
// new revision (ADR 0031): the sources read as the pass reads them (the requester's rights when
// so configured, the source-values cache), the namespace's labels, and `observed` producers.
import type { KubeObject } from '../../api/object-meta.ts';
import type { TemplateInstance } from '../../api/template-instance.ts';
import { LABEL_INSTANCE_UID } from '../../api/well-known.ts';
import {
  evaluateInstance,
  type InstanceEvaluation,
} from '../../engine/evaluation/instance-evaluation.ts';
import type { ObjectSchemas } from '../../engine/object-schema/object-schema.ts';
import type { ContentChoice } from '../../engine/releases/content-choice.ts';
import type { RenderRunner } from '../../engine/render/render-job.ts';
import type { TenancyPolicy } from '../../engine/shared/acting-identity.ts';
import type { Requester } from '../../engine/sources/requester.ts';
import { isClusterError, type ClusterPort, type ObjectId } from '../cluster-port.ts';
import type { CacheReader } from '../reader.ts';
import { ClusterSource, type SourceCache } from './cluster-source.ts';
import { requesterAuthorizer, type AuthorizeSources } from './requester-authorization.ts';
import type { CachedReadAccess } from './tenant-access.ts';

export interface EvaluationDeps {
  cache: Pick<CacheReader, 'namespaceLabels'>;
  /** Where renders run (the operator's worker pool); this thread when not given. */
  renderer?: RenderRunner;
  /** Whose rights a valueFrom read needs besides the operator's (ADR 0020); default operator. */
  authorizeSources?: AuthorizeSources;
  /** Source values kept between passes (never a Secret's); none kept when not given. */
  sourceCache?: SourceCache;
  /** What rendered objects are checked against before any dry run (ADR 0030). */
  schemas?: ObjectSchemas;
  /** Who a Template's requests are made as (ADR 0035); absent: the operator itself. */
  tenancy?: TenancyPolicy;
  /** Asks whether the acting identity may read what the caches would serve (ADR 0035). */
  cachedReads?: CachedReadAccess;
}

/**
 * The identity an evaluation reads as: `port` makes its requests as `user` (ADR 0035); the
 * operator's own port, with no user, in single-team mode.
 */
export interface Acting {
  port: ClusterPort;
  user?: Requester;
}

/** The evaluation, and the source reads it made (what the pass watches). */
export interface ClusterEvaluation {
  evaluation: InstanceEvaluation;
  reads: ClusterSource['reads'];
}

export interface EvaluationOptions {
  /**
   * The pass's: registers what the evaluation read before the watches its first reads waited
   * for are let go, so they run on without a restart.
   */
  track?: (result: ClusterEvaluation) => Promise<void>;
  /** Who the reads are made as; the operator (`cluster`) when not given. */
  acting?: Acting;
}

/** Resolves and renders `instance` with `content`, reading its inputs from the cluster. */
export async function evaluateOnCluster(
  cluster: ClusterPort,
  deps: EvaluationDeps,
  instance: TemplateInstance,
  content: Pick<ContentChoice, 'template' | 'missingRevision'>,
  { track, acting = { port: cluster } }: EvaluationOptions = {},
): Promise<ClusterEvaluation> {
  const { user } = acting;
  const cachedReads = deps.cachedReads;
  const source = new ClusterSource(
    acting.port,
    deps.authorizeSources === 'requester' ? requesterAuthorizer(cluster, instance) : undefined,
    deps.sourceCache,
    user && cachedReads ? (ref) => cachedReads.decide(user, ref) : undefined,
  );
  try {
    const namespace = instance.metadata.namespace ?? '';
    const evaluation = await evaluateInstance({
      instance,
      template: content.template,
      missingRevision: content.missingRevision,
      namespaceLabels:
        deps.cache.namespaceLabels(namespace) ?? (await namespaceLabels(cluster, namespace)),
      port: source,
      observe: (ref) => observe(acting.port, instance, ref),
      renderer: deps.renderer,
      schemas: deps.schemas,
      tenancy: deps.tenancy,
    });
    const result = { evaluation, reads: source.reads };
    await track?.(result);
    return result;
  } finally {
    source.release();
  }
}

/**
 * A producer an `observed` call names, as this instance applied it: an object of that name
 * that this instance does not own (not applied yet, someone else's) counts as not there, so
 * nothing of a stranger's is copied into what the instance renders. Not a source watch: the
 * producer is rendered, so the drift watch on its kind already brings its changes.
 */
async function observe(
  cluster: ClusterPort,
  instance: TemplateInstance,
  ref: ObjectId,
): Promise<KubeObject | undefined> {
  let live: KubeObject | undefined;
  try {
    live = await cluster.get(ref);
  } catch (error) {
    if (isClusterError(error, 'NotServed')) return undefined;
    throw error;
  }
  const uid = instance.metadata.uid;
  return uid !== undefined && live?.metadata.labels?.[LABEL_INSTANCE_UID] === uid
    ? live
    : undefined;
}

async function namespaceLabels(
  cluster: ClusterPort,
  name: string,
): Promise<Record<string, string>> {
  const namespace = await cluster.get({ apiVersion: 'v1', kind: 'Namespace', name });
  return namespace?.metadata.labels ?? {};
}
