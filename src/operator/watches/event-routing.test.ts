import { describe, expect, it } from 'vitest';
import type { ObjectHead } from '../../api/object-meta.ts';
import {
  ANNOTATION_APPLYSET_GROUP_KINDS,
  FINALIZER_INSTANCE,
  LABEL_APPLYSET_ID,
} from '../../api/well-known.ts';
import type { Template, TemplateRevision } from '../../api/template.ts';
import type { TemplateInstance } from '../../api/template-instance.ts';
import type { Request } from '../../framework/reconciler.ts';
import {
  instancesBehindRevision,
  ownRecordWritten,
  specOrMetadataChanged,
  templateOfInstance,
} from './event-routing.ts';

const head = (metadata: ObjectHead['metadata']): ObjectHead => ({
  apiVersion: 'stencil.dev/v1alpha1',
  kind: 'TemplateInstance',
  metadata: { name: 'i', namespace: 'ns', generation: 1, ...metadata },
});

describe('instance events the reconciler caused itself', () => {
  const RECORD = {
    labels: { [LABEL_APPLYSET_ID]: 'applyset-x-v1' },
    annotations: { [ANNOTATION_APPLYSET_GROUP_KINDS]: 'ConfigMap' },
  };

  it.each([
    [
      'our finalizer added',
      head({ finalizers: ['other'] }),
      head({ finalizers: ['other', FINALIZER_INSTANCE] }),
    ],
    [
      'finalizer and ApplySet record in one patch',
      head({}),
      head({ finalizers: [FINALIZER_INSTANCE], ...RECORD }),
    ],
    [
      'a kind added to the record',
      head({ finalizers: [FINALIZER_INSTANCE], ...RECORD }),
      head({
        finalizers: [FINALIZER_INSTANCE],
        ...RECORD,
        annotations: { [ANNOTATION_APPLYSET_GROUP_KINDS]: 'ConfigMap,Deployment.apps' },
      }),
    ],
  ])('%s: no second pass', (_, before, after) => {
    expect(specOrMetadataChanged(after, before)).toBe(true);
    expect(ownRecordWritten(after, before)).toBe(true);
  });

  it.each([
    ['the generation moved too', head({ finalizers: [FINALIZER_INSTANCE], generation: 2 })],
    ['a label of someone else', head({ finalizers: [FINALIZER_INSTANCE], labels: { a: 'b' } })],
    ['a finalizer of someone else', head({ finalizers: [FINALIZER_INSTANCE, 'x'] })],
    ['an annotation of someone else', head({ ...RECORD, annotations: { note: 'x' } })],
  ])('anything else changed beside it still counts: %s', (_, after) => {
    expect(ownRecordWritten(after, head({}))).toBe(false);
  });

  it('our finalizer removed, or nothing changed, is not ours to ignore', () => {
    const withOurs = head({ finalizers: [FINALIZER_INSTANCE], ...RECORD });
    expect(ownRecordWritten(head({ ...RECORD }), withOurs)).toBe(false);
    expect(ownRecordWritten(withOurs, withOurs)).toBe(false);
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
  const instance = (name: string, pin?: number, latestRevision?: number): TemplateInstance => ({
    apiVersion: 'stencil.dev/v1alpha1',
    kind: 'TemplateInstance',
    metadata: { name, namespace: 'team-a', generation: 1 },
    spec: { templateRef: { name: 'app', namespace: 'platform', revision: pin } },
    status: latestRevision === undefined ? undefined : { latestRevision },
  });

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
