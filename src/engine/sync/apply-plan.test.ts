import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../api/object-meta.ts';
import { planApply, stepWait, type ApplyStep, type PlanInput } from './apply-plan.ts';

const object = (
  apiVersion: string,
  kind: string,
  name: string,
  namespace?: string,
): KubeObject => ({
  apiVersion,
  kind,
  metadata: { name, ...(namespace ? { namespace } : {}) },
});

const crd = (group: string, kind: string): KubeObject => ({
  ...object(
    'apiextensions.k8s.io/v1',
    'CustomResourceDefinition',
    `${kind.toLowerCase()}s.${group}`,
  ),
  spec: { group, scope: 'Namespaced', names: { kind } },
});

const input = (o: KubeObject, exists = false, settled = false): PlanInput => ({
  object: o,
  exists,
  settled,
});

describe('planApply', () => {
  it('checks and writes everything in one step when nothing needs a prerequisite', () => {
    const plan = planApply([
      input(object('v1', 'ConfigMap', 'a', 'team')),
      input(object('v1', 'Service', 'b', 'team'), true),
    ]);
    expect(plan.steps).toEqual([{ check: [0, 1], write: [0, 1], awaitKinds: [] }]);
  });

  it('leaves settled objects out entirely', () => {
    const plan = planApply([
      input(object('v1', 'ConfigMap', 'a', 'team'), true, true),
      input(object('v1', 'ConfigMap', 'b', 'team')),
    ]);
    expect(plan.steps).toEqual([{ check: [1], write: [1], awaitKinds: [] }]);
  });

  it('writes a new Namespace before checking what goes into it', () => {
    const plan = planApply([
      input(object('v1', 'Namespace', 'fresh')),
      input(object('v1', 'ConfigMap', 'outside', 'team')),
      input(object('v1', 'ConfigMap', 'inside', 'fresh')),
    ]);
    expect(plan.steps).toEqual([
      { check: [0, 1], write: [0], awaitKinds: [] },
      { check: [2], write: [1, 2], awaitKinds: [] },
    ]);
  });

  it('does not defer objects of a Namespace that already exists', () => {
    const plan = planApply([
      input(object('v1', 'Namespace', 'old'), true),
      input(object('v1', 'ConfigMap', 'inside', 'old')),
    ]);
    expect(plan.steps).toHaveLength(1);
  });

  it('installs a CRD first and waits for its kind before checking its resources', () => {
    const plan = planApply([
      input(crd('example.com', 'Widget')),
      input(object('v1', 'ConfigMap', 'config', 'team')),
      input(object('example.com/v1', 'Widget', 'w', 'team')),
    ]);
    expect(plan.steps).toEqual([
      { check: [0, 1], write: [0], awaitKinds: [] },
      {
        check: [2],
        write: [1, 2],
        awaitKinds: [{ apiVersion: 'example.com/v1', kind: 'Widget' }],
      },
    ]);
  });

  it('does not wait for kinds of a settled CRD (it is served already)', () => {
    const plan = planApply([
      input(crd('example.com', 'Widget'), true, true),
      input(object('example.com/v1', 'Widget', 'w', 'team')),
    ]);
    expect(plan.steps).toEqual([{ check: [1], write: [1], awaitKinds: [] }]);
  });
});

describe('planApply with waves', () => {
  const waved = (o: KubeObject, wave: number, exists = false, settled = false): PlanInput => ({
    ...input(o, exists, settled),
    wave,
  });

  it('plans each wave on its own, each later one waiting for every earlier object to be healthy', () => {
    const plan = planApply([
      waved(object('v1', 'Secret', 's', 'team'), 0),
      waved(object('v1', 'ConfigMap', 'c', 'team'), 0, true, true),
      waved(object('apps/v1', 'Deployment', 'd', 'team'), 1),
      waved(object('v1', 'Service', 'svc', 'team'), 2),
    ]);
    expect(plan.steps).toEqual([
      { check: [0], write: [0], awaitKinds: [], wave: 0 },
      { check: [2], write: [2], awaitKinds: [], wave: 1, awaitHealthy: [0, 1] },
      { check: [3], write: [3], awaitKinds: [], wave: 2, awaitHealthy: [0, 1, 2] },
    ]);
  });

  it('leaves out a wave with nothing to do', () => {
    const plan = planApply([
      waved(object('v1', 'Secret', 's', 'team'), 0, true, true),
      waved(object('v1', 'ConfigMap', 'c', 'team'), 1),
    ]);
    expect(plan.steps).toEqual([
      { check: [1], write: [1], awaitKinds: [], wave: 1, awaitHealthy: [0] },
    ]);
  });
});

describe('stepWait: the wave gate and the inputs a step waits for', () => {
  const claim = object('v1', 'PersistentVolumeClaim', 'data', 'team');
  const app = object('v1', 'ConfigMap', 'app', 'team');
  const bound = { ...claim, status: { phase: 'Bound' } };
  const pending = { ...claim, status: { phase: 'Pending' } };
  const wave1: ApplyStep = { check: [1], write: [1], awaitKinds: [], wave: 1, awaitHealthy: [0] };
  const wave0: ApplyStep = { check: [0], write: [0], awaitKinds: [] };

  interface Row {
    name: string;
    step: ApplyStep;
    current: (KubeObject | undefined)[];
    wrote?: boolean;
    waits?: (string | undefined)[];
    /** A part of the reason, or undefined: the step goes. */
    expected: string | undefined;
  }
  const none = [undefined, undefined];
  it.each<Row>([
    { name: 'the first wave waits for nothing', step: wave0, current: none, expected: undefined },
    {
      name: 'an earlier wave that is Current lets the step go',
      step: wave1,
      current: [bound, undefined],
      expected: undefined,
    },
    {
      name: 'an earlier wave not Current holds it, naming the object',
      step: wave1,
      current: [pending, undefined],
      expected: 'wave 1 waits for PersistentVolumeClaim team/data (InProgress',
    },
    {
      name: 'an earlier wave not created yet holds it',
      step: wave1,
      current: none,
      expected: 'wave 1 waits for PersistentVolumeClaim team/data (InProgress: not created yet)',
    },
    {
      name: 'anything written in this pass holds a gated step, healthy or not',
      step: wave1,
      current: [bound, undefined],
      wrote: true,
      expected: 'wave 1 waits for the earlier waves, just applied, to report their health',
    },
    {
      name: 'a write in this pass does not hold an ungated step',
      step: wave0,
      current: none,
      wrote: true,
      expected: undefined,
    },
    {
      name: 'an input not observed holds the object that reads it',
      step: wave0,
      current: none,
      waits: ['Service db has no .spec.clusterIP yet'],
      expected: 'wave 0: Service db has no .spec.clusterIP yet',
    },
    {
      name: 'the gate is reported before the input',
      step: wave1,
      current: [pending, undefined],
      waits: [undefined, 'input missing'],
      expected: 'wave 1 waits for PersistentVolumeClaim',
    },
    {
      name: 'an input of an object outside the step does not hold it',
      step: wave0,
      current: none,
      waits: [undefined, 'input missing'],
      expected: undefined,
    },
  ])('$name', ({ step, current, wrote = false, waits, expected }) => {
    const wait = stepWait(step, {
      desired: [claim, app],
      current,
      wroteThisPass: wrote,
      ...(waits ? { waits } : {}),
    });
    if (expected === undefined) expect(wait).toBeUndefined();
    else expect(wait).toContain(expected);
  });
});
