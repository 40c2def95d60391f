// TemplateInstanceSet planning (ADR 0014): selector and spec checks, namespace overrides and
// their precedence, the stamped instance, the plan over namespaces (policy, conflicts, readiness,
// removals) and the status counts; fast-check properties over random namespace fleets.
import { fc, it as prop } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import type { Template } from '../../api/template.ts';
import type { TemplateInstance } from '../../api/template-instance.ts';
import type { TemplateInstanceSet } from '../../api/template-instance-set.ts';
import { ANNOTATION_REQUESTER, LABEL_INSTANCE_SET } from '../../api/well-known.ts';
import { caseCounter, runs } from '../../../test/support/property-runs.ts';
import {
  matchingNamespaces,
  namespaceOverrides,
  planSet,
  releasedInstance,
  selectorProblem,
  setSpecProblem,
  stampedInstance,
  exactSpec,
  stampedParameters,
  upToDate,
  type NamespaceView,
  type SetInputs,
} from './instance-set.ts';
import { validateAgainstCrd } from '../crd-schema/schema-validation.ts';

const tried = caseCounter('instance-set');

function template(extra: Partial<Template['spec']> = {}): Template {
  return {
    apiVersion: 'stencil.dev/v1alpha1',
    kind: 'Template',
    metadata: { name: 'settings', namespace: 'platform' },
    spec: {
      parameters: [
        { name: 'greeting', type: 'string', value: 'hello' },
        { name: 'replicas', type: 'number', value: 1 },
        { name: 'tls', type: 'bool' },
        { name: 'hosts', type: 'array' },
        { name: 'password', required: true },
      ],
      targetNamespaces: { selector: { matchLabels: { allowed: 'yes' } } },
      handlebars: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n',
      ...extra,
    },
  };
}

function set(spec: Partial<TemplateInstanceSet['spec']> = {}): TemplateInstanceSet {
  return {
    apiVersion: 'stencil.dev/v1alpha1',
    kind: 'TemplateInstanceSet',
    metadata: { name: 'fanout', uid: 'set-uid', generation: 1 },
    spec: {
      namespaceSelector: { matchLabels: { team: 'x' } },
      template: {
        metadata: { labels: { tier: 'gold' } },
        spec: {
          templateRef: { name: 'settings', namespace: 'platform' },
          parameters: [{ name: 'greeting', value: 'hi' }],
        },
      },
      ...spec,
    },
  };
}

const ns = (
  name: string,
  labels: Record<string, string> = { team: 'x', allowed: 'yes' },
  annotations: Record<string, string> = {},
): NamespaceView => ({ name, labels, annotations });

function inputs(extra: Partial<SetInputs> = {}): SetInputs {
  const instances = extra.stamped ?? [];
  return {
    set: set(),
    template: template(),
    namespaces: [],
    stamped: instances,
    existing: (namespace, name) =>
      instances.find((i) => i.metadata.namespace === namespace && i.metadata.name === name),
    ...extra,
  };
}

/** The instance as the API server would hold it once reconciled: generation and a Ready status. */
function live(
  desired: TemplateInstance,
  ready: 'True' | 'False' | 'pending' = 'True',
): TemplateInstance {
  const status =
    ready === 'pending'
      ? undefined
      : {
          phase: ready === 'True' ? ('Ready' as const) : ('Failed' as const),
          observedGeneration: 1,
          conditions: [
            {
              type: 'Ready',
              status: ready,
              reason: ready === 'True' ? 'Reconciled' : 'InvalidParameter',
              message: ready === 'True' ? 'ok' : 'parameters.replicas: expected a number',
              lastTransitionTime: '2026-01-01T00:00:00Z',
            },
          ],
        };
  return {
    ...structuredClone(desired),
    metadata: { ...structuredClone(desired.metadata), generation: 1, uid: 'i' },
    ...(status ? { status } : {}),
  };
}

describe('the selector and the Set spec', () => {
  it.each([
    [{ matchLabels: { a: 'b' } }, undefined],
    [{}, undefined],
    [
      { matchExpressions: [{ key: 'a', operator: 'In' as const, values: [] }] },
      'needs at least one value',
    ],
    [
      { matchExpressions: [{ key: 'a', operator: 'Exists' as const, values: ['x'] }] },
      'takes no values',
    ],
    [
      { matchExpressions: [{ key: 'a', operator: 'Near' as 'In', values: ['x'] }] },
      'unknown operator "Near"',
    ],
  ])('selector %j: %s', (selector, problem) => {
    const found = selectorProblem(selector);
    if (problem === undefined) expect(found).toBeUndefined();
    else expect(found).toContain(problem);
  });

  it('names spec.namespaceSelector.matchExpressions[i] in the problem', () => {
    expect(
      selectorProblem({
        matchExpressions: [
          { key: 'a', operator: 'Exists' },
          { key: 'b', operator: 'NotIn' },
        ],
      }),
    ).toMatch(/^spec\.namespaceSelector\.matchExpressions\[1\]\.values: /);
  });

  it('refuses a ConfigMap override of a parameter the Template does not declare, naming the field', () => {
    const s = set({ overrides: { configMap: { name: 'o', parameters: ['greeting', 'nope'] } } });
    expect(setSpecProblem(s, template())).toBe(
      'spec.overrides.configMap.parameters[1]: Template platform/settings declares no parameter "nope"',
    );
  });

  it('refuses a ConfigMap override of a parameter the Set reads with valueFrom', () => {
    const s = set({ overrides: { configMap: { name: 'o', parameters: ['greeting'] } } });
    s.spec.template.spec.parameters = [
      { name: 'greeting', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } },
    ];
    expect(setSpecProblem(s, template())).toContain('valueFrom');
  });

  it('the CRD (offline validator) requires templateRef.namespace', () => {
    const object = structuredClone(set()) as unknown as Record<string, unknown>;
    const spec = object.spec as TemplateInstanceSet['spec'];
    (spec.template.spec.templateRef as { namespace?: string }).namespace = undefined;
    delete (spec.template.spec.templateRef as { namespace?: string }).namespace;
    const problems = validateAgainstCrd('TemplateInstanceSet', object);
    expect(problems.map((p) => p.path)).toContain('spec.template.spec.templateRef.namespace');
    expect(validateAgainstCrd('TemplateInstanceSet', set())).toEqual([]);
  });

  it('the CRD (offline validator) limits the name to 63 characters: it is a label value', () => {
    const long = set();
    long.metadata.name = 'x'.repeat(64);
    expect(validateAgainstCrd('TemplateInstanceSet', long)[0]?.message).toContain(
      'at most 63 characters',
    );
  });
});

describe('namespace overrides', () => {
  it('reads labels and annotations with the prefix; the annotation wins', () => {
    const result = namespaceOverrides(
      ns(
        'a',
        { 'parameters.stencil.dev/greeting': 'from-label', 'parameters.stencil.dev/replicas': '3' },
        { 'parameters.stencil.dev/greeting': 'from annotation', unrelated: 'x' },
      ),
      template(),
    );
    expect(result).toEqual({
      ok: true,
      values: new Map([
        ['greeting', 'from annotation'],
        ['replicas', '3'],
      ]),
    });
  });

  it('ignores keys naming a parameter the Template does not declare', () => {
    const result = namespaceOverrides(
      ns('a', {}, { 'parameters.stencil.dev/other': 'x' }),
      template(),
    );
    expect(result).toEqual({ ok: true, values: new Map() });
  });

  it.each([
    ['replicas', 'three'],
    ['tls', 'yes'],
    ['hosts', 'a,b'],
  ])('refuses %s=%s, naming the namespace, the key and the parameter', (name, text) => {
    const result = namespaceOverrides(
      ns('team-a', {}, { [`parameters.stencil.dev/${name}`]: text }),
      template(),
    );
    expect(result.ok).toBe(false);
    const message = (result as { message: string }).message;
    expect(message).toContain('namespace "team-a"');
    expect(message).toContain(`annotation parameters.stencil.dev/${name}`);
    expect(message).toContain(name);
  });

  it('accepts texts its type parses (number, bool, JSON array)', () => {
    const result = namespaceOverrides(
      ns(
        'a',
        {
          'parameters.stencil.dev/replicas': '2.5',
          'parameters.stencil.dev/tls': 'true',
        },
        { 'parameters.stencil.dev/hosts': '["a.example.com"]' },
      ),
      template(),
    );
    expect(result.ok).toBe(true);
  });
});

describe('stamped parameters: Template default < Set < namespace < ConfigMap', () => {
  const withConfigMap = (parameters: string[]): TemplateInstanceSet =>
    set({ overrides: { configMap: { name: 'overrides', parameters } } });

  it('the namespace value replaces the Set value', () => {
    expect(stampedParameters(set(), template(), new Map([['greeting', 'ns']]))).toEqual([
      { name: 'greeting', value: 'ns' },
    ]);
  });

  it('a ConfigMap override falls back to the namespace value, else the Set value, else the Template default', () => {
    const t = template();
    const s = withConfigMap(['greeting', 'replicas']);
    expect(stampedParameters(s, t, new Map([['greeting', 'ns']]))).toEqual([
      {
        name: 'greeting',
        valueFrom: { configMapKeyRef: { name: 'overrides', key: 'greeting' } },
        defaultValue: 'ns',
      },
      {
        name: 'replicas',
        valueFrom: { configMapKeyRef: { name: 'overrides', key: 'replicas' } },
        defaultValue: 1,
      },
    ]);
    expect(stampedParameters(s, t, new Map())[0]).toMatchObject({ defaultValue: 'hi' });
  });

  it('a required parameter, or a number/bool one without a default, gets no fallback', () => {
    const params = stampedParameters(
      withConfigMap(['password', 'tls', 'hosts']),
      template(),
      new Map(),
    );
    const byName = new Map(params.map((p) => [p.name, p]));
    expect(byName.get('password')).not.toHaveProperty('defaultValue');
    expect(byName.get('tls')).not.toHaveProperty('defaultValue');
    expect(byName.get('hosts')).toMatchObject({ defaultValue: [] });
  });

  it('the stamped instance carries the Set label, the template metadata and a controller ownerReference', () => {
    const instance = stampedInstance(set(), 'team-a', [{ name: 'greeting', value: 'hi' }]);
    expect(instance.metadata).toEqual({
      name: 'fanout',
      namespace: 'team-a',
      labels: { tier: 'gold', [LABEL_INSTANCE_SET]: 'fanout' },
      ownerReferences: [
        {
          apiVersion: 'stencil.dev/v1alpha1',
          kind: 'TemplateInstanceSet',
          name: 'fanout',
          uid: 'set-uid',
          controller: true,
          blockOwnerDeletion: false,
        },
      ],
    });
    expect(instance.spec).toEqual({
      templateRef: { name: 'settings', namespace: 'platform' },
      parameters: [{ name: 'greeting', value: 'hi' }],
    });
    // Released: the apply names neither the label nor the owner, so server-side apply drops them.
    expect(releasedInstance(live(instance)).metadata).toEqual({
      name: 'fanout',
      namespace: 'team-a',
    });
  });

  it('the instance acts for whoever created the Set, never for a requester written in its template', () => {
    const s = set();
    const forged = '{"username":"system:admin"}';
    const creator = '{"username":"platform-admin"}';
    s.spec.template.metadata = { annotations: { [ANNOTATION_REQUESTER]: forged, team: 'x' } };
    expect(stampedInstance(s, 'a', []).metadata.annotations).toEqual({ team: 'x' });
    s.metadata.annotations = { [ANNOTATION_REQUESTER]: creator };
    const stamped = stampedInstance(s, 'a', []);
    expect(stamped.metadata.annotations).toEqual({ team: 'x', [ANNOTATION_REQUESTER]: creator });
    // Released, it keeps acting for the same user.
    expect(releasedInstance(live(stamped)).metadata.annotations).toEqual({
      [ANNOTATION_REQUESTER]: creator,
    });
  });

  it('the Set label cannot be overridden by template labels', () => {
    const s = set();
    s.spec.template.metadata = { labels: { [LABEL_INSTANCE_SET]: 'someone-else' } };
    expect(stampedInstance(s, 'a', []).metadata.labels?.[LABEL_INSTANCE_SET]).toBe('fanout');
  });
});

describe('a pass over the namespaces', () => {
  const desiredIn = (namespace: string): TemplateInstance =>
    stampedInstance(set(), namespace, [{ name: 'greeting', value: 'hi' }]);

  it('without its Template: a condition only, nothing applied or removed', () => {
    const plan = planSet(
      inputs({ template: undefined, namespaces: [ns('a')], stamped: [live(desiredIn('a'))] }),
    );
    expect(plan.apply).toEqual([]);
    expect(plan.remove).toEqual([]);
    expect(plan.ready).toMatchObject({ status: 'False', reason: 'TemplateNotFound' });
    expect(plan.ready.message).toContain('platform/settings');
  });

  it('with an invalid spec: a condition naming the field, nothing applied or removed', () => {
    const plan = planSet(
      inputs({
        set: set({ namespaceSelector: { matchExpressions: [{ key: 'a', operator: 'In' }] } }),
        namespaces: [ns('a')],
        stamped: [live(desiredIn('b'))],
      }),
    );
    expect(plan.apply).toEqual([]);
    expect(plan.remove).toEqual([]);
    expect(plan.ready).toMatchObject({ reason: 'InvalidSpec' });
    expect(plan.ready.message).toContain('spec.namespaceSelector.matchExpressions[0].values');
  });

  it('stamps matching namespaces, refuses those the Template refuses, skips the others', () => {
    const plan = planSet(
      inputs({
        namespaces: [
          ns('b'),
          ns('a'),
          ns('refused', { team: 'x' }),
          ns('other', { allowed: 'yes' }),
        ],
      }),
    );
    expect(plan.apply.map((i) => i.metadata.namespace)).toEqual(['a', 'b']);
    expect(plan.status).toEqual({
      desired: 3,
      ready: 0,
      failed: 1,
      failingNamespaces: [
        {
          namespace: 'refused',
          reason: 'NamespaceNotPermitted',
          message: expect.stringContaining('platform/settings') as string,
        },
      ],
    });
    expect(plan.ready).toMatchObject({ status: 'False', reason: 'NotReady' });
  });

  it('leaves an instance of the same name it did not stamp alone (Conflict)', () => {
    const foreign: TemplateInstance = {
      apiVersion: 'stencil.dev/v1alpha1',
      kind: 'TemplateInstance',
      metadata: { name: 'fanout', namespace: 'a' },
      spec: { templateRef: { name: 'mine' } },
    };
    const plan = planSet(inputs({ namespaces: [ns('a')], existing: () => foreign }));
    expect(plan.apply).toEqual([]);
    expect(plan.status.failingNamespaces?.[0]).toMatchObject({
      namespace: 'a',
      reason: 'Conflict',
    });
  });

  it('takes back an instance it controls whose label was removed, restoring the label', () => {
    const detached = live(desiredIn('a'));
    delete detached.metadata.labels![LABEL_INSTANCE_SET];
    detached.spec = { ...detached.spec, parameters: [{ name: 'maxPods', value: '100000' }] };
    const plan = planSet(inputs({ namespaces: [ns('a')], existing: () => detached }));
    expect(plan.status.failingNamespaces ?? []).toEqual([]);
    expect(plan.apply).toEqual([desiredIn('a')]);
    expect(plan.apply[0]!.metadata.labels?.[LABEL_INSTANCE_SET]).toBe('fanout');
  });

  it('writes nothing for an up-to-date instance and counts it by its Ready condition', () => {
    const ready = live(desiredIn('a'));
    const failed = live(desiredIn('b'), 'False');
    const pending = live(desiredIn('c'), 'pending');
    const plan = planSet(
      inputs({ namespaces: [ns('a'), ns('b'), ns('c')], stamped: [ready, failed, pending] }),
    );
    expect(plan.apply).toEqual([]);
    expect(plan.status).toMatchObject({ desired: 3, ready: 1, failed: 1 });
    expect(plan.status.failingNamespaces?.[0]).toMatchObject({
      namespace: 'b',
      reason: 'InstanceFailed',
      message: expect.stringContaining('InvalidParameter') as string,
    });
  });

  it('counts an instance whose status is of an older generation as pending', () => {
    const stale = live(desiredIn('a'));
    stale.metadata.generation = 2;
    expect(planSet(inputs({ namespaces: [ns('a')], stamped: [stale] })).status.ready).toBe(0);
  });

  it('re-applies an instance whose spec drifted from the Set', () => {
    const drifted = live(desiredIn('a'));
    drifted.spec.parameters = [{ name: 'greeting', value: 'edited by hand' }];
    expect(upToDate(drifted, desiredIn('a'))).toBe(false);
    expect(planSet(inputs({ namespaces: [ns('a')], stamped: [drifted] })).apply).toHaveLength(1);
  });

  it('removes stamped instances whose namespace stopped matching, or of an old name; release under preserveOnRemoval', () => {
    const gone = live(desiredIn('gone'));
    const renamed = live({
      ...desiredIn('a'),
      metadata: { ...desiredIn('a').metadata, name: 'old-name' },
    });
    const kept = live(desiredIn('a'));
    const plan = planSet(
      inputs({ namespaces: [ns('a'), ns('gone', {})], stamped: [gone, renamed, kept] }),
    );
    expect(plan.remove.map((i) => `${i.metadata.namespace}/${i.metadata.name}`)).toEqual([
      'gone/fanout',
      'a/old-name',
    ]);
    expect(plan.release).toBe(false);
    expect(
      planSet(inputs({ set: set({ preserveOnRemoval: true }), namespaces: [], stamped: [gone] }))
        .release,
    ).toBe(true);
  });

  it('a terminating namespace no longer matches', () => {
    expect(
      matchingNamespaces(set(), [{ ...ns('a'), terminating: true }, ns('b')]).map((n) => n.name),
    ).toEqual(['b']);
  });

  it('lists at most 20 failing namespaces, by name, with the exact count', () => {
    const refused = Array.from({ length: 25 }, (_, i) =>
      ns(`r-${String(i).padStart(2, '0')}`, { team: 'x' }),
    );
    const plan = planSet(inputs({ namespaces: refused }));
    expect(plan.status.failed).toBe(25);
    expect(plan.status.failingNamespaces).toHaveLength(20);
    expect(plan.status.failingNamespaces?.[0]?.namespace).toBe('r-00');
    expect(plan.ready.message).toContain('25 failed');
  });

  it('is Ready with every desired namespace Ready, and with none matching', () => {
    expect(
      planSet(inputs({ namespaces: [ns('a')], stamped: [live(desiredIn('a'))] })).ready,
    ).toMatchObject({
      status: 'True',
      reason: 'AllReady',
    });
    expect(planSet(inputs({ namespaces: [] })).ready.status).toBe('True');
  });
});

describe('precedence as a property', () => {
  const maybe = fc.option(fc.string({ minLength: 1, maxLength: 6 }), { nil: undefined });
  prop.prop([maybe, maybe, maybe, fc.boolean()], runs(300))(
    'the stamped value is the highest level given: ConfigMap > namespace > Set > Template default',
    (templateDefault, setValue, namespaceValue, fromConfigMap) => {
      tried('precedence');
      const t = template({
        parameters: [
          { name: 'p', type: 'string', ...(templateDefault ? { value: templateDefault } : {}) },
        ],
      });
      const s = set({
        ...(fromConfigMap ? { overrides: { configMap: { name: 'cm', parameters: ['p'] } } } : {}),
      });
      s.spec.template.spec.parameters = setValue ? [{ name: 'p', value: setValue }] : [];
      const overrides = new Map(namespaceValue ? [['p', namespaceValue]] : []);
      const p = stampedParameters(s, t, overrides).find((x) => x.name === 'p');
      const literal = namespaceValue ?? setValue;
      if (fromConfigMap) {
        expect(p?.valueFrom).toEqual({ configMapKeyRef: { name: 'cm', key: 'p' } });
        expect(p?.defaultValue).toBe(literal ?? templateDefault ?? '');
        expect(p).not.toHaveProperty('value');
      } else if (literal !== undefined) expect(p).toEqual({ name: 'p', value: literal });
      else expect(p).toBeUndefined();
    },
  );
});

describe('properties over random namespace fleets', () => {
  const namespaceArb = fc.record({
    name: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'),
    team: fc.boolean(),
    allowed: fc.boolean(),
    terminating: fc.boolean(),
    override: fc.constantFrom(undefined, '2', 'two', 'true'),
  });
  const fleet = fc.uniqueArray(namespaceArb, { selector: (n) => n.name, maxLength: 6 });
  const instanceArb = fc.record({
    namespace: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'),
    ours: fc.boolean(),
    ready: fc.constantFrom('True' as const, 'False' as const, 'pending' as const),
  });
  const instances = fc.uniqueArray(instanceArb, { selector: (i) => i.namespace, maxLength: 6 });

  interface FleetNamespace {
    name: string;
    team: boolean;
    allowed: boolean;
    terminating: boolean;
    override: string | undefined;
  }
  interface FleetInstance {
    namespace: string;
    ours: boolean;
    ready: 'True' | 'False' | 'pending';
  }

  function build(namespaces: FleetNamespace[], existing: FleetInstance[]): SetInputs {
    const views = namespaces.map((n) => ({
      name: n.name,
      labels: { ...(n.team ? { team: 'x' } : {}), ...(n.allowed ? { allowed: 'yes' } : {}) },
      annotations: Object.fromEntries(
        n.override ? [['parameters.stencil.dev/replicas', n.override]] : [],
      ),
      terminating: n.terminating,
    }));
    const all = existing.map((e) => {
      const instance = live(stampedInstance(set(), e.namespace, []), e.ready);
      // Another's instance of the same name: neither the Set's label nor its ownerReference.
      if (!e.ours) {
        delete instance.metadata.labels![LABEL_INSTANCE_SET];
        delete instance.metadata.ownerReferences;
      }
      return instance;
    });
    return inputs({
      namespaces: views,
      stamped: all.filter((i) => i.metadata.labels?.[LABEL_INSTANCE_SET]),
      existing: (namespace, name) =>
        all.find((i) => i.metadata.namespace === namespace && i.metadata.name === name),
    });
  }

  prop.prop([fleet, instances], runs(300))(
    'counts add up, writes stay inside matching, permitted namespaces, foreign instances are never written or removed',
    (namespaces, existing) => {
      tried('counts and reach');
      const input = build(namespaces, existing);
      const plan = planSet(input);
      const matching = namespaces.filter((n) => n.team && !n.terminating);
      const { desired = 0, ready = 0, failed = 0 } = plan.status;
      expect(desired).toBe(matching.length);
      expect(ready + failed).toBeLessThanOrEqual(desired);
      expect(plan.status.failingNamespaces?.length ?? 0).toBe(Math.min(failed, 20));
      const permitted = new Set<string>(matching.filter((n) => n.allowed).map((n) => n.name));
      for (const i of plan.apply) expect(permitted.has(i.metadata.namespace ?? '')).toBe(true);
      const foreign: string[] = existing.filter((e) => !e.ours).map((e) => e.namespace);
      for (const i of [...plan.apply, ...plan.remove])
        expect(foreign.includes(i.metadata.namespace ?? '')).toBe(false);
      const matchingNames = new Set<string>(matching.map((n) => n.name));
      for (const i of plan.remove)
        expect(matchingNames.has(i.metadata.namespace ?? '')).toBe(false);
      expect(plan.ready.status === 'True').toBe(ready === desired);
    },
  );

  prop.prop([fleet, instances], runs(200))(
    'the plan is deterministic and does not change its inputs',
    (namespaces, existing) => {
      tried('deterministic');
      const input = build(namespaces, existing);
      const before = JSON.stringify([input.set, input.namespaces, input.stamped]);
      expect(JSON.stringify(planSet(input))).toBe(JSON.stringify(planSet(input)));
      expect(JSON.stringify([input.set, input.namespaces, input.stamped])).toBe(before);
    },
  );
});

describe('exactSpec: the merge patch that makes a stamped spec exactly the Set one', () => {
  const desired = {
    templateRef: { name: 't', namespace: 'platform' },
    parameters: [{ name: 'greeting', value: 'hi' }],
  };

  it.each([
    ['nothing added', desired, desired],
    [
      'a parameter appended (lists are replaced whole)',
      { ...desired, parameters: [...desired.parameters, { name: 'maxPods', value: 100000 }] },
      desired,
    ],
    [
      'a revision pinned',
      { ...desired, templateRef: { ...desired.templateRef, revision: 1 } },
      { ...desired, templateRef: { ...desired.templateRef, revision: null } },
    ],
    ['a field the Set does not write', { ...desired, ttl: '1s' }, { ...desired, ttl: null }],
    ['no live spec', undefined, desired],
  ])('%s', (_what, live, patch) => {
    expect(exactSpec(live, desired)).toEqual(patch);
  });
});
