import { describe, expect, it } from 'vitest';
import type { ObjectHead } from '../../api/object-meta.ts';
import { FINALIZER_INSTANCE } from '../../api/well-known.ts';
import type { Template, TemplateRevision } from '../../api/template.ts';
import type { TemplateInstance } from '../../api/template-instance.ts';
import type { Request } from '../../framework/reconciler.ts';
import {
  instancesBehindRevision,
  ownFinalizerAdded,
  specOrMetadataChanged,
  templateOfInstance,
} from './event-routing.ts';

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

describe('rollout progress routing', () => {
  const instance = (phase: string): TemplateInstance =>
    ({
      apiVersion: 'stencil.dev/v1alpha1',
      kind: 'TemplateInstance',
      metadata: { name: 'i', namespace: 'canary', generation: 1 },
      spec: { templateRef: { name: 'app', namespace: 'platform' } },
      status: { phase, revision: 3, observedGeneration: 1 },
    }) as unknown as TemplateInstance;

  function templatesEnqueued(rolloutPhase: string): Request[] {
    const template = { status: { rollout: { phase: rolloutPhase } } } as unknown as Template;
    return templateOfInstance(
      { template: () => template },
      { type: 'MODIFIED', object: instance('Failed'), old: instance('Pending'), origin: 'watch' },
    );
  }

  it('a report during a progressing or halted rollout reconciles the Template', () => {
    // Halted too: a second canary failing after the halt must join the failing list.
    expect(templatesEnqueued('Progressing')).toEqual([{ namespace: 'platform', name: 'app' }]);
    expect(templatesEnqueued('Halted')).toEqual([{ namespace: 'platform', name: 'app' }]);
    expect(templatesEnqueued('Complete')).toEqual([]);
  });
});

describe('a new TemplateRevision (issue #23 defect 1)', () => {
  const instance = (name: string, pin?: number, latestRevision?: number): TemplateInstance =>
    ({
      apiVersion: 'stencil.dev/v1alpha1',
      kind: 'TemplateInstance',
      metadata: { name, namespace: 'team-a', generation: 1 },
      spec: { templateRef: { name: 'app', namespace: 'platform', revision: pin } },
      status: latestRevision === undefined ? undefined : { latestRevision },
    }) as unknown as TemplateInstance;

  it('reconciles every instance that does not show it as latest yet, pinned ones included', () => {
    const instances = [
      instance('pinned', 1, 1),
      instance('unpinned', undefined, 1),
      instance('new'),
      instance('already', undefined, 2),
    ];
    const revision = {
      apiVersion: 'stencil.dev/v1alpha1',
      kind: 'TemplateRevision',
      metadata: { name: 'app-2', namespace: 'platform' },
      spec: { template: 'app', revision: 2 },
    } as TemplateRevision;
    const enqueued = instancesBehindRevision(
      { instancesOf: () => instances },
      { type: 'ADDED', object: revision, old: undefined, origin: 'watch' },
    ).map((r) => r.name);
    expect(enqueued).toEqual(['pinned', 'unpinned', 'new']);
  });
});
