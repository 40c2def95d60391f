import { describe, expect, it } from 'vitest';
import type { ObjectHead } from '../api/object-meta.ts';
import { FINALIZER_INSTANCE } from '../api/well-known.ts';
import { ownFinalizerAdded, specOrMetadataChanged } from './event-routing.ts';

const head = (metadata: ObjectHead['metadata']): ObjectHead => ({
  apiVersion: 'stencil.dev/v1alpha1',
  kind: 'TemplateInstance',
  metadata: { name: 'i', namespace: 'ns', generation: 1, ...metadata },
});

describe('instance events the reconciler caused itself', () => {
  it('the update that only added our finalizer needs no second pass', () => {
    const before = head({ finalizers: ['other'] });
    const after = head({ finalizers: ['other', FINALIZER_INSTANCE] });
    expect(specOrMetadataChanged(after, before)).toBe(true);
    expect(ownFinalizerAdded(after, before)).toBe(true);
  });

  it('anything else changed beside it still counts', () => {
    const before = head({});
    expect(
      ownFinalizerAdded(head({ finalizers: [FINALIZER_INSTANCE], generation: 2 }), before),
    ).toBe(false);
    expect(
      ownFinalizerAdded(head({ finalizers: [FINALIZER_INSTANCE], labels: { a: 'b' } }), before),
    ).toBe(false);
    expect(ownFinalizerAdded(head({ finalizers: [FINALIZER_INSTANCE, 'x'] }), before)).toBe(false);
  });

  it('our finalizer removed, or already there, is not ours to ignore', () => {
    const withOurs = head({ finalizers: [FINALIZER_INSTANCE] });
    expect(ownFinalizerAdded(head({ finalizers: [] }), withOurs)).toBe(false);
    expect(ownFinalizerAdded(withOurs, withOurs)).toBe(false);
  });
});
