// The health of a rendered object from its live state, with kstatus semantics
// (sigs.k8s.io/cli-utils): Current (reconciled and healthy), InProgress (its controller is still
// working), Failed (it will not get there by itself), Unknown (its status cannot be read).
// Built-in rules for the common workload and infrastructure kinds, the generic rule for every
// other object, and a per-object override: a CEL expression over `self` in the
// `stencil.dev/ready-when` annotation.
import type { KubeObject } from '../../api/object-meta.ts';
import type { ResourceHealth } from '../../api/template-instance.ts';
import { ANNOTATION_READY_WHEN } from '../../api/well-known.ts';
import { compileCel } from '../crd-schema/cel.ts';

export type HealthStatus = ResourceHealth;

export interface Health {
  status: HealthStatus;
  /** Why, in a few words: what it waits for, or what failed. Empty when Current. */
  message: string;
}

interface Condition {
  type?: unknown;
  status?: unknown;
  reason?: unknown;
  message?: unknown;
}

type Status = Record<string, unknown> & { conditions?: Condition[]; observedGeneration?: unknown };
type Rule = (object: KubeObject, status: Status) => Health;

const current: Health = { status: 'Current', message: '' };
const progressing = (message: string): Health => ({ status: 'InProgress', message });
const failed = (message: string): Health => ({ status: 'Failed', message });

/** The first of `values` that is a string (a condition's message, else its reason). */
function text(...values: unknown[]): string {
  return values.find((v): v is string => typeof v === 'string') ?? '';
}

function num(value: unknown, fallback = 0): number {
  return typeof value === 'number' ? value : fallback;
}

function conditionOf(status: Status, type: string): Condition | undefined {
  return Array.isArray(status.conditions)
    ? status.conditions.find((c) => c?.type === type)
    : undefined;
}

function isTrue(status: Status, type: string): boolean {
  return conditionOf(status, type)?.status === 'True';
}

function spec(object: KubeObject): Record<string, unknown> {
  const value = (object as { spec?: unknown }).spec;
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

/** Its controller has not yet acted on the latest spec. */
function staleGeneration(object: KubeObject, status: Status): Health | undefined {
  const generation = object.metadata.generation;
  const observed = status.observedGeneration;
  if (typeof generation === 'number' && typeof observed === 'number' && observed < generation)
    return progressing(`its controller has observed generation ${observed} of ${generation}`);
  return undefined;
}

/** kstatus' rule for any object: observedGeneration, then the common condition types. */
const generic: Rule = (object, status) => {
  const stale = staleGeneration(object, status);
  if (stale) return stale;
  for (const type of ['Failed', 'Degraded', 'Stalled']) {
    const c = conditionOf(status, type);
    if (c?.status === 'True') return failed(`${type}: ${text(c.message, c.reason)}`);
  }
  if (isTrue(status, 'Reconciling')) return progressing('Reconciling');
  for (const type of ['Ready', 'Available']) {
    const c = conditionOf(status, type);
    if (c?.status === 'False') return progressing(`${type} is False: ${text(c.message, c.reason)}`);
  }
  return current;
};

const deployment: Rule = (object, status) => {
  const stale = staleGeneration(object, status);
  if (stale) return stale;
  const progressingCondition = conditionOf(status, 'Progressing');
  if (progressingCondition?.reason === 'ProgressDeadlineExceeded')
    return failed(`progress deadline exceeded: ${text(progressingCondition.message)}`);
  const wanted = num(spec(object).replicas, 1);
  const updated = num(status.updatedReplicas);
  const available = num(status.availableReplicas);
  if (updated < wanted) return progressing(`${updated} of ${wanted} replicas updated`);
  if (num(status.replicas) > updated) return progressing('old replicas are being terminated');
  if (available < wanted) return progressing(`${available} of ${wanted} replicas available`);
  return current;
};

const statefulSet: Rule = (object, status) => {
  const stale = staleGeneration(object, status);
  if (stale) return stale;
  const wanted = num(spec(object).replicas, 1);
  const ready = num(status.readyReplicas);
  if (ready < wanted) return progressing(`${ready} of ${wanted} replicas ready`);
  if (status.updateRevision !== undefined && status.updateRevision !== status.currentRevision)
    return progressing('a rolling update is in progress');
  return current;
};

const daemonSet: Rule = (object, status) => {
  const stale = staleGeneration(object, status);
  if (stale) return stale;
  const desired = num(status.desiredNumberScheduled);
  const updated = num(status.updatedNumberScheduled);
  const available = num(status.numberAvailable);
  if (updated < desired) return progressing(`${updated} of ${desired} pods updated`);
  if (available < desired) return progressing(`${available} of ${desired} pods available`);
  return current;
};

const replicaSet: Rule = (object, status) => {
  const stale = staleGeneration(object, status);
  if (stale) return stale;
  const wanted = num(spec(object).replicas, 1);
  const available = num(status.availableReplicas);
  return available < wanted ? progressing(`${available} of ${wanted} replicas available`) : current;
};

const job: Rule = (_object, status) => {
  const failure = conditionOf(status, 'Failed');
  if (failure?.status === 'True')
    return failed(`the Job failed: ${text(failure.message, failure.reason)}`);
  if (isTrue(status, 'Complete')) return current;
  return progressing('the Job has not completed');
};

const pod: Rule = (_object, status) => {
  const phase = status.phase;
  if (phase === 'Succeeded') return current;
  if (phase === 'Failed') return failed(`the Pod failed: ${text(status.reason, status.message)}`);
  if (phase === 'Running' && isTrue(status, 'Ready')) return current;
  return progressing(`the Pod is ${typeof phase === 'string' ? phase : 'pending'}`);
};

const claim: Rule = (_object, status) => {
  if (status.phase === 'Bound') return current;
  if (status.phase === 'Lost') return failed('the claim lost its volume');
  return progressing(`the claim is ${typeof status.phase === 'string' ? status.phase : 'Pending'}`);
};

function hasAddress(status: Status): boolean {
  const ingress = (status.loadBalancer as { ingress?: unknown } | undefined)?.ingress;
  return Array.isArray(ingress) && ingress.length > 0;
}

const service: Rule = (object, status) => {
  if (spec(object).type !== 'LoadBalancer' || hasAddress(status)) return current;
  return progressing('waiting for a load balancer address');
};

const namedCondition =
  (type: string, what: string): Rule =>
  (object, status) => {
    const c = conditionOf(status, type);
    if (c?.status === 'True') return current;
    if (c?.status === 'False') return progressing(`${what}: ${text(c.message, c.reason)}`);
    return progressing(`waiting for ${type}`);
  };

const namespace: Rule = (_object, status) =>
  status.phase === 'Terminating' ? progressing('the Namespace is terminating') : current;

/** `group/Kind` → its rule; every other kind gets the generic rule. */
const RULES: Readonly<Record<string, Rule>> = {
  'apps/Deployment': deployment,
  'apps/StatefulSet': statefulSet,
  'apps/DaemonSet': daemonSet,
  'apps/ReplicaSet': replicaSet,
  'batch/Job': job,
  'batch/CronJob': () => current,
  '/Pod': pod,
  '/PersistentVolumeClaim': claim,
  '/Service': service,
  'apiextensions.k8s.io/CustomResourceDefinition': namedCondition('Established', 'not established'),
  'apiregistration.k8s.io/APIService': namedCondition('Available', 'not available'),
  '/Namespace': namespace,
};

function groupKind(object: KubeObject): string {
  const slash = object.apiVersion.indexOf('/');
  return `${slash < 0 ? '' : object.apiVersion.slice(0, slash)}/${object.kind}`;
}

/** An object whose controller has written nothing yet (no status, or an empty one). */
function withoutStatus(status: unknown): boolean {
  return (
    typeof status !== 'object' ||
    status === null ||
    Object.values(status as Record<string, unknown>).every(
      (v) =>
        v === undefined || v === null || (typeof v === 'object' && Object.keys(v).length === 0),
    )
  );
}

/** The health of `live` by the `stencil.dev/ready-when` expression it carries. */
function byExpression(live: KubeObject, expression: string): Health {
  let program: ReturnType<typeof compileCel>;
  try {
    program = compileCel(expression);
  } catch (error) {
    return {
      status: 'Unknown',
      message: `${ANNOTATION_READY_WHEN} is not valid CEL: ${(error as Error).message}`,
    };
  }
  const result = program(live);
  if (!result.ok)
    return progressing(`${ANNOTATION_READY_WHEN} cannot be evaluated yet: ${result.error}`);
  if (typeof result.value !== 'boolean')
    return { status: 'Unknown', message: `${ANNOTATION_READY_WHEN} did not give a boolean` };
  return result.value ? current : progressing(`waiting for ${expression}`);
}

/**
 * The health of a rendered object from its live state. `desired` is the rendered object (its
 * `stencil.dev/ready-when` annotation decides, when present); objects whose controller has
 * written no status are Current once applied — there may be no controller at all.
 */
export function healthOf(live: KubeObject, desired: KubeObject = live): Health {
  const expression = desired.metadata.annotations?.[ANNOTATION_READY_WHEN];
  if (expression !== undefined) return byExpression(live, expression);
  const status = (live as { status?: unknown }).status;
  const rule = RULES[groupKind(live)];
  // Built-in kinds with a rule of their own are judged even with an empty status where an
  // empty status means "not there yet" (a Job, a Pod, a claim, a load balancer address).
  if (withoutStatus(status) && !(rule && EMPTY_MEANS_WAITING.has(groupKind(live)))) return current;
  if (typeof status !== 'object' || status === null) return current;
  return (rule ?? generic)(live, status as Status);
}

/** Kinds whose empty status means their controller has not finished, rather than "none". */
const EMPTY_MEANS_WAITING = new Set([
  'batch/Job',
  '/Pod',
  '/PersistentVolumeClaim',
  '/Service',
  'apiextensions.k8s.io/CustomResourceDefinition',
  'apiregistration.k8s.io/APIService',
]);

/** Workloads whose controller, where one runs, writes a status: empty is "not yet", not "none". */
const REPORTED_BY_CONTROLLER = new Set([
  'apps/Deployment',
  'apps/StatefulSet',
  'apps/DaemonSet',
  'apps/ReplicaSet',
]);

export const NOT_REPORTED_YET = 'just applied; its controller has not reported on it yet';

/**
 * The health of an object as the pass's own write returned it. That answer predates anything its
 * controller reports: a Deployment just created has an empty status whether or not it will ever
 * become available, and judging it Current made an instance Ready (and an `off` one freeze, Ready
 * for good) before the Deployment controller had looked at it. Such a workload is InProgress
 * here; the pass looks again, and a later read of it is judged by healthOf (Current if there is
 * no controller to write a status).
 */
export function healthOfWritten(written: KubeObject, desired: KubeObject = written): Health {
  const health = healthOf(written, desired);
  if (health.status !== 'Current' || !REPORTED_BY_CONTROLLER.has(groupKind(written))) return health;
  if (desired.metadata.annotations?.[ANNOTATION_READY_WHEN] !== undefined) return health;
  return withoutStatus((written as { status?: unknown }).status)
    ? progressing(NOT_REPORTED_YET)
    : health;
}
