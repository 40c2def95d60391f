import { describe, expect, it } from 'vitest';
import type { Condition } from '../../api/condition.ts';
import type { ObjectHead } from '../../api/object-meta.ts';
import type { TemplateInstance } from '../../api/template-instance.ts';
import { instanceChanged, namespaceChanged } from './instance-sets.ts';

const namespace = (metadata: ObjectHead['metadata']): ObjectHead => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name: 'team-a', resourceVersion: '1', ...metadata },
});

describe('which namespace changes re-evaluate the Sets', () => {
  it('labels, override annotations and termination do', () => {
    const before = namespace({ labels: { a: 'b' } });
    expect(namespaceChanged(namespace({ labels: { a: 'c' } }), before)).toBe(true);
    expect(
      namespaceChanged(
        namespace({ labels: { a: 'b' }, annotations: { 'parameters.stencil.dev/x': '1' } }),
        before,
      ),
    ).toBe(true);
    expect(
      namespaceChanged(
        namespace({ labels: { a: 'b' }, deletionTimestamp: '2026-01-01T00:00:00Z' }),
        before,
      ),
    ).toBe(true);
    expect(namespaceChanged(before, undefined)).toBe(true);
  });

  it('other annotations and a new resourceVersion alone do not', () => {
    const before = namespace({ labels: { a: 'b' } });
    expect(
      namespaceChanged(
        namespace({
          labels: { a: 'b' },
          resourceVersion: '2',
          annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}' },
        }),
        before,
      ),
    ).toBe(false);
  });
});

describe('which instance changes concern its Set', () => {
  const instance = (status: TemplateInstance['status'], generation = 1): TemplateInstance => ({
    apiVersion: 'stencil.dev/v1alpha1',
    kind: 'TemplateInstance',
    metadata: { name: 'i', namespace: 'a', generation },
    spec: { templateRef: { name: 't' } },
    status,
  });
  const ready = (status: 'True' | 'False'): Condition => ({
    type: 'Ready',
    status,
    reason: 'r',
    message: 'm',
    lastTransitionTime: '2026-01-01T00:00:00Z',
  });

  it('its readiness, phase, observed generation or spec do', () => {
    const before = instance({
      phase: 'Progressing',
      observedGeneration: 1,
      conditions: [ready('False')],
    });
    expect(
      instanceChanged(
        instance({ phase: 'Ready', observedGeneration: 1, conditions: [ready('True')] }),
        before,
      ),
    ).toBe(true);
    expect(instanceChanged(instance(before.status, 2), before)).toBe(true);
  });

  it('other status fields do not', () => {
    const before = instance({ phase: 'Ready', observedGeneration: 1, conditions: [ready('True')] });
    expect(instanceChanged(instance({ ...before.status, readyResources: '2/2' }), before)).toBe(
      false,
    );
  });
});
