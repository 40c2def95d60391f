// The policy of one instance pass, as tables: each row is an observation and what `decide` must
// answer. No API server; the reconciler only carries out what these rows decide.
import { describe, expect, it } from 'vitest';
import {
  InstanceConditionType as T,
  InstanceReason as R,
  type Condition,
} from '../../api/condition.ts';
import type { KubeObject } from '../../api/object-meta.ts';
import type { SyncMode, Template } from '../../api/template.ts';
import type { TemplateInstance, TemplateInstanceStatus } from '../../api/template-instance.ts';
import {
  ANNOTATION_APPLYSET_GROUP_KINDS,
  FINALIZER_INSTANCE,
  LABEL_INSTANCE_UID,
} from '../../api/well-known.ts';
import { aTemplate, anInstance } from '../../../test/support/builders.ts';
import { draft } from '../shared/conditions.ts';
import type { InstanceEvaluation } from '../evaluation/instance-evaluation.ts';
import type { ObjectId } from '../objects/inventory.ts';
import { Redactor } from '../redaction/redaction.ts';
import {
  decide,
  MAX_EXPIRY_WAIT_MS,
  WAIT_REQUEUE_MS,
  type Conclusion,
  type Decision,
  type Step,
} from './decision.ts';
import type { ApplyReport, Observed, PassTrigger } from './observation.ts';

const NOW = new Date('2026-12-04T12:00:00Z');
const UID = '6c1f0d0e-0000-4000-8000-000000000001';

function template(mode: SyncMode = 'revert', ignoreFields: string[] = []): Template {
  return aTemplate([], { sync: { mode, ignoreFields } });
}

function instance(
  status?: TemplateInstanceStatus,
  extra: { deleting?: boolean; finalizer?: boolean; ttl?: string; pin?: number } = {},
): TemplateInstance {
  const base = anInstance();
  return {
    ...base,
    metadata: {
      ...base.metadata,
      creationTimestamp: '2026-12-04T11:00:00Z',
      finalizers: extra.finalizer === false ? [] : [FINALIZER_INSTANCE],
      ...(extra.deleting ? { deletionTimestamp: '2026-12-04T11:59:00Z' } : {}),
    },
    spec: {
      ...base.spec,
      templateRef: { ...base.spec.templateRef, revision: extra.pin },
      ...(extra.ttl ? { ttl: extra.ttl } : {}),
    },
    ...(status ? { status } : {}),
  };
}

const configMap = (name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'team-a', labels: { [LABEL_INSTANCE_UID]: UID } },
  data: { a: 'b' },
});

/** A Deployment whose controller has not observed its generation: InProgress. */
const rollingDeployment = (name: string): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: 'team-a', generation: 2 },
  status: { observedGeneration: 1 },
});

const SECRET_VALUE = 's3cr3t-value';

function evaluation(
  outcome:
    | { ok: true; resources?: KubeObject[]; fallback?: boolean; notServed?: boolean }
    | { ok: false; reason: string; transient?: true },
): InstanceEvaluation {
  const redactor = Redactor.of([{ name: 'password', value: SECRET_VALUE }]);
  if (!outcome.ok) {
    const message = `failed: ${outcome.reason}`;
    return {
      ok: false,
      conditions: [draft(T.TemplateResolved, false, outcome.reason, message)],
      problem: { path: '', reason: outcome.reason, message, transient: outcome.transient },
      resources: [],
      observed: [],
      waits: [],
      syncMode: 'revert',
      redactor,
      notes: [],
    };
  }
  const resources = outcome.resources ?? [configMap('app')];
  return {
    ok: true,
    conditions: [draft(T.Rendered, true, R.Success, 'rendered')],
    resolved: {
      values: {},
      status: [],
      defaultsUsed: outcome.notServed
        ? [{ name: 'crd', message: 'kind not served', failure: 'NotServed' }]
        : [],
      transientFallback: outcome.fallback ?? false,
      sources: [],
      redactor,
      secretParameters: [],
    },
    resources,
    observed: resources.map(() => []),
    waits: resources.map(() => undefined),
    syncMode: 'revert',
    redactor,
    notes: [],
  };
}

const applied = (live: KubeObject[], written: KubeObject[] = live, unchanged = 0): ApplyReport => ({
  ok: true,
  live,
  written,
  unchanged,
});

/** Applied before: what the status records after one clean apply of `names`. */
const appliedBefore = (...names: string[]): TemplateInstanceStatus => ({
  trackedGVKs: ['/v1/ConfigMap'],
  renderedResources: names.map((name) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    name,
    namespace: 'team-a',
  })),
});

const id = (name: string): ObjectId => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  name,
  namespace: 'team-a',
});

function observed(parts: Partial<Observed> & { instance: TemplateInstance | undefined }): Observed {
  return { now: NOW, ...parts };
}

/** A live pass: content chosen from `tpl`, evaluated as given. */
function live(
  inst: TemplateInstance,
  tpl: Template,
  rest: Partial<Observed> = {},
  revisions: { revision?: number; latest?: number } = {},
): Observed {
  return observed({ instance: inst, content: { template: tpl, ...revisions }, ...rest });
}

function concluded(decision: Decision): Conclusion {
  expect(decision.step).toBe('conclude');
  return decision as Conclusion;
}

const readyOf = (c: Conclusion): Condition | undefined =>
  c.status?.conditions?.find((x) => x.type === T.Ready);
const reasons = (c: Conclusion): string[] => c.events.map((e) => `${e.type}/${e.reason}`);

describe('decide: where a pass starts', () => {
  it.each([
    ['the instance is gone', observed({ instance: undefined }), 'conclude'],
    ['no content chosen yet', observed({ instance: instance() }), 'choose-content'],
    ['content chosen, not evaluated', live(instance(), template()), 'evaluate'],
    ['evaluated', live(instance(), template(), { evaluation: evaluation({ ok: true }) }), 'apply'],
    [
      'deleting, with our finalizer',
      observed({ instance: instance(appliedBefore('app'), { deleting: true }) }),
      'list-owned',
    ],
    [
      'expired (spec.ttl 1m, created an hour ago)',
      observed({ instance: instance(undefined, { ttl: '1m' }) }),
      'expire',
    ],
  ])('%s → %s', (_, o, step) => {
    expect(decide(o).step).toBe(step);
  });

  it('a gone instance drops its watches', () => {
    const c = concluded(decide(observed({ instance: undefined })));
    expect(c).toMatchObject({ releaseWatches: true, end: { kind: 'done' } });
  });

  it('a frozen off instance does nothing and drops its watches; under revert it is evaluated', () => {
    const frozen = instance({ frozen: true });
    const off = concluded(decide(live(frozen, template('off'))));
    expect(off).toMatchObject({ releaseWatches: true, end: { kind: 'done' } });
    expect(off.status).toBeUndefined();
    expect(decide(live(frozen, template('revert'))).step).toBe('evaluate');
  });

  it('expires at the very instant its lifetime ends', () => {
    const inst = instance(undefined, { ttl: '1h' });
    expect(decide(observed({ instance: inst })).step).toBe('expire');
    const justBefore = new Date(NOW.getTime() - 1);
    expect(decide(observed({ instance: inst, now: justBefore })).step).toBe('choose-content');
  });

  it('an expired instance is deleted once, then the pass ends with an Expired Event', () => {
    const inst = instance(undefined, { ttl: '1m' });
    const c = concluded(decide(observed({ instance: inst, expired: true })));
    expect(c.end).toEqual({ kind: 'done' });
    expect(reasons(c)).toEqual(['Normal/Expired']);
  });
});

describe('decide: deleting an instance', () => {
  const deleting = (status = appliedBefore('app'), finalizer = true): TemplateInstance =>
    instance(status, { deleting: true, finalizer });

  it('lists by the recorded kinds and entries, then deletes everything owned', () => {
    const inst = deleting();
    expect(decide(observed({ instance: inst }))).toEqual({
      step: 'list-owned',
      gvks: ['/v1/ConfigMap'],
      known: inst.status!.renderedResources,
      namespaces: ['team-a'],
    });
    const owned = { owned: [id('app'), id('old')], unlisted: [] };
    expect(decide(observed({ instance: inst, owned }))).toEqual({
      step: 'delete',
      objects: owned.owned,
    });
  });

  it.each([
    [
      'everything deleted',
      { deleted: [id('app')], remaining: [], allAccepted: true },
      { end: { kind: 'done' }, removeFinalizer: true },
      ['Normal/Pruned'],
      undefined,
    ],
    [
      'nothing was left',
      { deleted: [], remaining: [], allAccepted: true },
      { end: { kind: 'done' }, removeFinalizer: true },
      [],
      undefined,
    ],
    [
      'held by finalizers',
      {
        deleted: [],
        remaining: [{ id: id('app'), message: 'waiting on finalizers' }],
        allAccepted: true,
      },
      { end: { kind: 'requeue', afterMs: WAIT_REQUEUE_MS }, removeFinalizer: false },
      [],
      undefined,
    ],
    [
      'a delete is Forbidden (defect 2: says so, never hangs silently)',
      {
        deleted: [],
        remaining: [
          { id: id('app'), message: 'ConfigMap team-a/app: forbidden: cannot delete configmaps' },
        ],
        allAccepted: false,
      },
      { end: { kind: 'retry' }, removeFinalizer: false },
      ['Warning/DeleteFailed'],
      R.DeleteFailed,
    ],
  ])('%s', (_, deleted, expected, events, readyReason) => {
    const owned = { owned: [id('app')], unlisted: [] };
    const c = concluded(decide(observed({ instance: deleting(), owned, deleted })));
    expect(c).toMatchObject({ ...expected, releaseWatches: true });
    expect(reasons(c)).toEqual(events);
    expect(readyOf(c)?.reason).toBe(readyReason);
    if (readyReason) expect(readyOf(c)?.message).toContain('cannot delete configmaps');
  });

  it('while it waits, records only what it still owns, so nothing gone is deleted again', () => {
    const inst = deleting(appliedBefore('app', 'old'));
    const owned = { owned: [id('app'), id('old')], unlisted: [] };
    const deleted = {
      deleted: [id('app')],
      remaining: [{ id: id('old'), message: 'waiting on finalizers' }],
      allAccepted: true,
    };
    const c = concluded(decide(observed({ instance: inst, owned, deleted })));
    expect(c.end).toMatchObject({ kind: 'requeue' });
    expect(c.status?.renderedResources?.map((r) => r.name)).toEqual(['old']);
    expect(c.status?.trackedGVKs).toEqual(inst.status?.trackedGVKs);
    // The next pass lists by the same kinds, and knows only what is left.
    const next = deleting(c.status);
    expect(decide(observed({ instance: next }))).toMatchObject({
      step: 'list-owned',
      known: [expect.objectContaining({ name: 'old' })],
    });
  });

  it('does not delete again what is already being deleted: it waits for it', () => {
    const going = { ...id('old'), terminating: true };
    const owned = { owned: [id('app'), going], unlisted: [] };
    expect(decide(observed({ instance: deleting(), owned }))).toEqual({
      step: 'delete',
      objects: [id('app')],
    });
    const deleted = { deleted: [id('app')], remaining: [], allAccepted: true };
    const c = concluded(decide(observed({ instance: deleting(), owned, deleted })));
    expect(c).toMatchObject({ end: { kind: 'requeue' }, removeFinalizer: false });
    // Only terminating objects left: no delete step at all, still waiting.
    const onlyGoing = { owned: [going], unlisted: [] };
    const waiting = concluded(decide(observed({ instance: deleting(), owned: onlyGoing })));
    expect(waiting).toMatchObject({ end: { kind: 'requeue' }, removeFinalizer: false });
  });

  it('a kind the operator may not list is reported, and does not hold the deletion', () => {
    const owned = { owned: [], unlisted: ['PersistentVolumeClaim (v1): forbidden'] };
    const deleted = { deleted: [], remaining: [], allAccepted: true };
    const c = concluded(decide(observed({ instance: deleting(), owned, deleted })));
    expect(c.removeFinalizer).toBe(true);
    expect(reasons(c)).toEqual(['Warning/ListForbidden']);
  });

  it('without our finalizer there is nothing to do but let go', () => {
    const c = concluded(decide(observed({ instance: deleting(appliedBefore('app'), false) })));
    expect(c).toMatchObject({
      releaseWatches: true,
      removeFinalizer: false,
      end: { kind: 'done' },
    });
  });
});

describe('decide: an evaluation that failed', () => {
  // Defect 4: an input error waits for an edit; anything the cluster may fix is retried.
  it.each([
    [R.TemplateNotFound, 'terminal'],
    [R.RevisionNotFound, 'terminal'],
    [R.InvalidTTL, 'terminal'],
    [R.TTLNotAllowed, 'terminal'],
    [R.NamespaceNotPermitted, 'terminal'],
    [R.InvalidParameter, 'terminal'],
    [R.OverrideNotAllowed, 'terminal'],
    [R.ReferenceNotPermitted, 'terminal'],
    [R.SourceNotAuthorized, 'terminal'],
    [R.TemplateExecutionFailed, 'terminal'],
    [R.RenderTimeout, 'terminal'],
    [R.ParameterResolutionFailed, 'retry'],
  ])('%s ends the pass as %s, Ready=False with that reason, nothing applied', (reason, kind) => {
    const c = concluded(
      decide(live(instance(), template(), { evaluation: evaluation({ ok: false, reason }) })),
    );
    expect(c.end.kind).toBe(kind);
    expect(readyOf(c)?.reason).toBe(reason);
    expect(c.status?.phase).toBe('Failed');
    expect(c).toMatchObject({ triggerHandled: false, wroteForTrigger: false });
  });

  it('a rendered kind not served yet (transient) is retried, not left waiting for an edit', () => {
    const e = evaluation({ ok: false, reason: R.TemplateExecutionFailed, transient: true });
    expect(concluded(decide(live(instance(), template(), { evaluation: e }))).end.kind).toBe(
      'retry',
    );
  });

  it.each<[string, PassTrigger | undefined, string, string[]]>([
    [
      'a source change',
      { kind: 'source', description: 'Secret team-a/db changed' },
      R.ParameterResolutionFailed,
      ['Normal/SourceChanged', 'Warning/ParameterResolutionFailed'],
    ],
    ['no trigger', undefined, R.ParameterResolutionFailed, ['Warning/ParameterResolutionFailed']],
    ['a drift event', { kind: 'drift', description: 'ConfigMap edited' }, R.InvalidParameter, []],
  ])('after %s the Events are %s', (_, trigger, reason, events) => {
    const o = live(instance(), template(), {
      trigger,
      evaluation: evaluation({ ok: false, reason }),
    });
    expect(reasons(concluded(decide(o)))).toEqual(events);
  });

  it('keeps what was recorded: trackedGVKs and the rendered resources stay', () => {
    const before = appliedBefore('app');
    const o = live(instance(before), template(), {
      evaluation: evaluation({ ok: false, reason: R.InvalidParameter }),
    });
    const c = concluded(decide(o));
    expect(c.status?.trackedGVKs).toEqual(before.trackedGVKs);
    expect(c.status?.renderedResources).toEqual(before.renderedResources);
  });
});

describe('decide: what to apply', () => {
  it.each<[SyncMode, string[]]>([
    ['off', []],
    ['revert', ['spec.replicas']],
    ['strict', ['spec.replicas']],
  ])('under %s the ignored fields are %j', (mode, ignoreFields) => {
    const o = live(instance(), template(mode, ['spec.replicas']), {
      evaluation: evaluation({ ok: true }),
    });
    expect(decide(o)).toMatchObject({ step: 'apply', ignoreFields });
  });

  it('records every kind ever rendered before applying: the recorded ones and the new ones', () => {
    const o = live(instance({ trackedGVKs: ['apps/v1/Deployment'] }), template(), {
      evaluation: evaluation({ ok: true }),
    });
    expect(decide(o)).toMatchObject({
      step: 'apply',
      record: {
        annotations: { [ANNOTATION_APPLYSET_GROUP_KINDS]: 'ConfigMap,Deployment.apps' },
      },
    });
  });

  it('adds its finalizer in the same record when it has none yet', () => {
    const o = live(instance(undefined, { finalizer: false }), template(), {
      evaluation: evaluation({ ok: true }),
    });
    const step = decide(o);
    expect(step).toMatchObject({ step: 'apply', record: { finalizers: [FINALIZER_INSTANCE] } });
  });

  it('writes nothing before applying when the instance already carries its record', () => {
    const first = decide(
      live(instance(), template(), { evaluation: evaluation({ ok: true }) }),
    ) as Extract<Step, { step: 'apply' }>;
    const recorded = instance();
    recorded.metadata = {
      ...recorded.metadata,
      labels: { ...recorded.metadata.labels, ...first.record?.labels },
      annotations: { ...recorded.metadata.annotations, ...first.record?.annotations },
    };
    const again = decide(live(recorded, template(), { evaluation: evaluation({ ok: true }) }));
    expect(again).toEqual({ step: 'apply', ignoreFields: [] });
  });
});

describe('decide: an apply that stopped', () => {
  const stopped = (report: ApplyReport, trigger?: PassTrigger): Conclusion =>
    concluded(
      decide(
        live(instance(appliedBefore('app')), template(), {
          trigger,
          evaluation: evaluation({ ok: true }),
          applied: report,
        }),
      ),
    );

  it.each([
    ['an invalid object (nothing but an edit helps)', false, 'terminal'],
    ['a Forbidden read or write (defect 2)', true, 'retry'],
  ])('%s: ApplyFailed with the reason, counted once as failed, %s', (_, retry, kind) => {
    const message = `ConfigMap team-a/app rejected by the API server (read): forbidden, password ${SECRET_VALUE}`;
    const c = stopped({ ok: false, message, retry });
    expect(c.end.kind).toBe(kind);
    expect(readyOf(c)?.reason).toBe(R.ApplyFailed);
    expect(readyOf(c)?.message).toContain('(read): forbidden');
    expect(JSON.stringify(c)).not.toContain(SECRET_VALUE);
    expect(reasons(c)).toEqual(['Warning/ApplyFailed']);
    expect(c.counts.failed).toBe(1);
    expect(c.triggerHandled).toBe(false);
  });

  it('an adoption refusal waits on the object in its way, not on backoff', () => {
    const message = 'ConfigMap team-a/app already exists and is not managed by this instance';
    const blockedBy = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'team-a', name: 'app' };
    const c = stopped({ ok: false, message, retry: false, blockedBy });
    expect(c.end.kind).toBe('terminal');
    expect(readyOf(c)?.reason).toBe(R.ApplyFailed);
  });

  it('waiting on an earlier wave: Progressing, a requeue (defect 6), counts only what it reached (defect 7)', () => {
    const first = configMap('app');
    const c = stopped(
      {
        ok: false,
        waiting: true,
        retry: true,
        message: 'wave 1 waits for Deployment team-a/db (InProgress)',
        written: [],
        live: [first, undefined],
        unchanged: 1,
      },
      { kind: 'source', description: 'Secret team-a/db changed' },
    );
    expect(c.end).toEqual({ kind: 'requeue', afterMs: WAIT_REQUEUE_MS });
    expect(c.status?.phase).toBe('Progressing');
    expect(readyOf(c)?.reason).toBe(R.Waiting);
    expect(c.counts).toMatchObject({ applied: 0, unchanged: 1, failed: 0 });
    // What exists so far, with its health; the previous entry of what is not reached stays.
    expect(c.status?.renderedResources).toEqual([
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'app', namespace: 'team-a', health: 'Current' },
    ]);
    expect(c).toMatchObject({ triggerHandled: true, wroteForTrigger: false });
  });
});

describe('decide: a clean apply', () => {
  const cm = configMap('app');
  const pass = (
    inst: TemplateInstance,
    tpl: Template,
    rest: Partial<Observed>,
    revisions?: { revision?: number; latest?: number },
  ): Decision =>
    decide(live(inst, tpl, { evaluation: evaluation({ ok: true }), ...rest }, revisions));

  interface FreezeRow {
    name: string;
    mode: SyncMode;
    frozen: boolean;
    object: KubeObject;
    phase: string;
    freeze?: 'freeze' | 'unfreeze';
  }
  it.each<FreezeRow>([
    {
      name: 'off, healthy: freezes',
      mode: 'off',
      frozen: false,
      object: cm,
      phase: 'Ready',
      freeze: 'freeze',
    },
    {
      name: 'off, not healthy yet: waits for health before freezing',
      mode: 'off',
      frozen: false,
      object: rollingDeployment('app'),
      phase: 'Progressing',
    },
    {
      name: 'revert, healthy: stays watched',
      mode: 'revert',
      frozen: false,
      object: cm,
      phase: 'Ready',
    },
    {
      name: 'revert, was frozen under off: unfreezes',
      mode: 'revert',
      frozen: true,
      object: cm,
      phase: 'Ready',
      freeze: 'unfreeze',
    },
  ])('$name', ({ mode, frozen, object, phase, freeze }) => {
    const c = concluded(
      pass(instance(frozen ? { frozen: true } : undefined), template(mode), {
        evaluation: evaluation({ ok: true, resources: [object] }),
        applied: applied([object]),
      }),
    );
    expect(c.status?.phase).toBe(phase);
    expect(c.status?.frozen === true).toBe(
      freeze === 'freeze' || (frozen && freeze !== 'unfreeze'),
    );
    expect(c.releaseWatches).toBe(freeze === 'freeze');
    expect(c.end).toEqual({ kind: 'done' });
  });

  it.each([
    [
      'written by this pass: waits for its controller, asks again soon',
      true,
      'Progressing',
      WAIT_REQUEUE_MS,
    ],
    [
      'read back unchanged: no controller reported, so Current (a bare plane converges)',
      false,
      'Ready',
      undefined,
    ],
  ])('a Deployment with an empty status, %s', (_, wasWritten, phase, afterMs) => {
    const fresh: KubeObject = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'app', namespace: 'team-a', generation: 1 },
      status: {},
    };
    const c = concluded(
      pass(instance(), template(), {
        evaluation: evaluation({ ok: true, resources: [fresh] }),
        applied: wasWritten ? applied([fresh]) : applied([fresh], [], 1),
      }),
    );
    expect(c.status?.phase).toBe(phase);
    expect(c.end).toEqual(afterMs === undefined ? { kind: 'done' } : { kind: 'requeue', afterMs });
  });

  it.each<[string, PassTrigger | undefined, string[], number]>([
    [
      'a drift event: reverted',
      { kind: 'drift', description: 'edited' },
      ['Normal/DriftReverted'],
      1,
    ],
    [
      'a source change: applied for it',
      { kind: 'source', description: 'Secret changed' },
      ['Normal/SourceChanged', 'Normal/Applied'],
      0,
    ],
    ['no trigger', undefined, ['Normal/Applied'], 0],
  ])('after %s', (_, trigger, events, driftReverted) => {
    const c = concluded(pass(instance(), template(), { trigger, applied: applied([cm]) }));
    expect(reasons(c)).toEqual(events);
    expect(c.counts).toMatchObject({ applied: 1, driftReverted });
    expect(c).toMatchObject({ triggerHandled: true, wroteForTrigger: true });
  });

  it('nothing written: no Event, counted unchanged, and the trigger is handled', () => {
    const c = concluded(pass(instance(), template(), { applied: applied([cm], [], 1) }));
    expect(c.events).toEqual([]);
    expect(c.counts).toMatchObject({ applied: 0, unchanged: 1 });
    expect(c).toMatchObject({ triggerHandled: true, wroteForTrigger: false });
  });

  it('pinned to revision 1 while 2 is the newest: the status says both (defect 1)', () => {
    const c = concluded(
      pass(
        instance(undefined, { pin: 1 }),
        template(),
        { applied: applied([cm]) },
        { revision: 1, latest: 2 },
      ),
    );
    expect(c.status).toMatchObject({ revision: 1, latestRevision: 2 });
  });

  it('a defaultValue that stood in for an unreadable source: no pruning, retried', () => {
    const c = pass(instance(appliedBefore('old')), template(), {
      evaluation: evaluation({ ok: true, fallback: true }),
      applied: applied([cm]),
    });
    expect(concluded(c).end.kind).toBe('retry');
  });

  it('a kind not served yet stood in by a default: retried until it is', () => {
    const c = pass(instance(), template(), {
      evaluation: evaluation({ ok: true, notServed: true }),
      applied: applied([cm]),
    });
    expect(concluded(c).end.kind).toBe('retry');
  });

  it('expires later: comes back by the expiry at the latest', () => {
    const inst = instance(undefined, { ttl: '2h' });
    const c = concluded(pass(inst, template(), { applied: applied([cm]) }));
    expect(c.end).toEqual({ kind: 'requeue', afterMs: 3_600_000 });
    const far = concluded(
      pass(instance(undefined, { ttl: '720h' }), template(), { applied: applied([cm]) }),
    );
    expect(far.end).toEqual({ kind: 'requeue', afterMs: MAX_EXPIRY_WAIT_MS });
  });
});

describe('decide: pruning after a clean apply', () => {
  const cm = configMap('app');
  const pass = (
    status: TemplateInstanceStatus | undefined,
    rest: Partial<Observed> = {},
  ): Decision =>
    decide(
      live(instance(status), template(), {
        evaluation: evaluation({ ok: true }),
        applied: applied([cm]),
        ...rest,
      }),
    );

  it.each<[string, TemplateInstanceStatus | undefined, string]>([
    ['the first apply (nothing recorded, nothing owned)', undefined, 'conclude'],
    ['the same set as last time', appliedBefore('app'), 'conclude'],
    ['a set that changed', appliedBefore('app', 'old'), 'list-owned'],
    [
      'the same set, one entry still Failed',
      {
        ...appliedBefore('app'),
        renderedResources: [{ ...appliedBefore('app').renderedResources![0]!, status: 'Failed' }],
      },
      'list-owned',
    ],
  ])('%s → %s', (_, status, step) => {
    expect(pass(status).step).toBe(step);
  });

  it('deletes only what is owned and no longer rendered', () => {
    const owned = { owned: [id('app'), id('old')], unlisted: [] };
    expect(pass(appliedBefore('app', 'old'), { owned })).toEqual({
      step: 'delete',
      objects: [id('old')],
    });
  });

  it('waits for an orphan already being deleted instead of deleting it again', () => {
    const owned = { owned: [id('app'), { ...id('old'), terminating: true }], unlisted: [] };
    const c = concluded(pass(appliedBefore('app', 'old'), { owned }));
    expect(c.end).toMatchObject({ kind: 'requeue', afterMs: WAIT_REQUEUE_MS });
    expect(c.counts).toMatchObject({ orphansPending: 1, orphansDeleted: 0 });
  });

  it.each([
    [
      'deleted',
      { deleted: [id('old')], remaining: [], allAccepted: true },
      { kind: 'done' },
      { orphansDeleted: 1 },
      ['Normal/Applied', 'Normal/Pruned'],
    ],
    [
      'held by finalizers',
      { deleted: [], remaining: [{ id: id('old'), message: 'pending' }], allAccepted: true },
      { kind: 'requeue', afterMs: WAIT_REQUEUE_MS },
      { orphansPending: 1 },
      ['Normal/Applied'],
    ],
    [
      'refused',
      { deleted: [], remaining: [{ id: id('old'), message: 'forbidden' }], allAccepted: false },
      { kind: 'retry' },
      { orphansFailed: 1 },
      ['Normal/Applied'],
    ],
  ])('an orphan %s', (_, deleted, end, counts, events) => {
    const owned = { owned: [id('app'), id('old')], unlisted: [] };
    const c = concluded(pass(appliedBefore('app', 'old'), { owned, deleted }));
    expect(c.end).toMatchObject(end);
    expect(c.counts).toMatchObject(counts);
    expect(reasons(c)).toEqual(events);
    const kept = c.status?.renderedResources?.filter((r) => r.status === 'Failed') ?? [];
    expect(kept.map((r) => r.name)).toEqual(deleted.remaining.map((r) => r.id.name));
    expect(c.status?.frozen).toBeUndefined();
  });
});
