import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../api/object-meta.ts';
import type { TemplateInstance } from '../../api/template-instance.ts';
import {
  ANNOTATION_APPLYSET_GROUP_KINDS,
  ANNOTATION_APPLYSET_NAMESPACES,
  ANNOTATION_APPLYSET_TOOLING,
  FINALIZER_INSTANCE,
  LABEL_APPLYSET_ID,
} from '../../api/well-known.ts';
import { anInstance } from '../../../test/support/builders.ts';
import { groupKindName, parentRecord, recordedGroupKinds, recordedKinds } from './applyset.ts';
import { applySetId } from './inventory.ts';

const object = (apiVersion: string, kind: string, namespace?: string): KubeObject => ({
  apiVersion,
  kind,
  metadata: { name: 'x', ...(namespace ? { namespace } : {}) },
});

function instance(
  metadata: Partial<TemplateInstance['metadata']> = {},
  trackedGVKs?: string[],
): TemplateInstance {
  const base = anInstance();
  return {
    ...base,
    metadata: { ...base.metadata, name: 'shop', namespace: 'team-a', ...metadata },
    ...(trackedGVKs ? { status: { trackedGVKs } } : {}),
  };
}

describe('ApplySet id (KEP-3659)', () => {
  it('is base64url(sha256(name.namespace.kind.group)) between applyset- and -v1', () => {
    // Computed apart (Python's hashlib) for shop.team-a.TemplateInstance.stencil.dev.
    expect(applySetId({ name: 'shop', namespace: 'team-a' })).toBe(
      'applyset-UNZPALsZXkHBfcSdn6g7T6K08w3EWDIGlscAHAT8Jlo-v1',
    );
  });

  it('fits a label value (63 characters) for the longest names', () => {
    const id = applySetId({ name: 'n'.repeat(253), namespace: 'm'.repeat(63) });
    expect(id).toMatch(/^applyset-[A-Za-z0-9_-]{43}-v1$/);
  });
});

describe('group-kinds', () => {
  it.each([
    ['v1', 'ConfigMap', 'ConfigMap'],
    ['apps/v1', 'Deployment', 'Deployment.apps'],
    ['cert-manager.io/v1', 'Certificate', 'Certificate.cert-manager.io'],
  ])('%s %s is written %s', (apiVersion, kind, name) => {
    expect(groupKindName({ apiVersion, kind })).toBe(name);
  });

  it('what an earlier operator kept in status.trackedGVKs counts as recorded', () => {
    const i = instance({ annotations: { [ANNOTATION_APPLYSET_GROUP_KINDS]: 'Service' } }, [
      'apps/v1/Deployment',
      '/v1/ConfigMap',
    ]);
    expect(recordedGroupKinds(i)).toEqual(['ConfigMap', 'Deployment.apps', 'Service']);
  });
});

describe('parentRecord: what an instance writes on itself before applying', () => {
  const full = (): TemplateInstance => {
    const first = instance();
    const record = parentRecord(first, [object('v1', 'ConfigMap', 'team-a')])!;
    return instance({
      finalizers: record.finalizers,
      labels: record.labels,
      annotations: record.annotations,
    });
  };

  it('a new instance: finalizer, id, tooling and kinds in one record', () => {
    expect(parentRecord(instance(), [object('v1', 'ConfigMap', 'team-a')])).toEqual({
      finalizers: [FINALIZER_INSTANCE],
      labels: { [LABEL_APPLYSET_ID]: applySetId({ name: 'shop', namespace: 'team-a' }) },
      annotations: {
        [ANNOTATION_APPLYSET_TOOLING]: 'stencil/v1',
        [ANNOTATION_APPLYSET_GROUP_KINDS]: 'ConfigMap',
      },
    });
  });

  it('keeps finalizers of others', () => {
    const record = parentRecord(instance({ finalizers: ['other'] }), []);
    expect(record?.finalizers).toEqual(['other', FINALIZER_INSTANCE]);
  });

  it('nothing to write when the instance carries it all', () => {
    expect(parentRecord(full(), [object('v1', 'ConfigMap', 'team-a')])).toBeUndefined();
  });

  it('a kind that is no longer rendered stays recorded (pruning still finds its objects)', () => {
    expect(parentRecord(full(), [object('v1', 'Service', 'team-a')])).toEqual({
      annotations: { [ANNOTATION_APPLYSET_GROUP_KINDS]: 'ConfigMap,Service' },
    });
  });

  it('namespaces other than its own are added; cluster-scoped objects need none', () => {
    const record = parentRecord(full(), [
      object('v1', 'ConfigMap', 'team-b'),
      object('v1', 'ConfigMap', 'team-a'),
      object('rbac.authorization.k8s.io/v1', 'ClusterRole'),
    ]);
    expect(record?.annotations).toEqual({
      [ANNOTATION_APPLYSET_GROUP_KINDS]: 'ClusterRole.rbac.authorization.k8s.io,ConfigMap',
      [ANNOTATION_APPLYSET_NAMESPACES]: 'team-b',
    });
  });
});

describe('recordedKinds: what pruning and deletion list', () => {
  it('a recorded kind at a version a hint gives, else left to discovery', () => {
    const i = instance({
      annotations: { [ANNOTATION_APPLYSET_GROUP_KINDS]: 'ConfigMap,Deployment.apps,Widget.x.io' },
    });
    expect(recordedKinds(i, [{ apiVersion: 'apps/v1', kind: 'Deployment' }])).toEqual([
      '/v1/ConfigMap',
      'apps/v1/Deployment',
      'x.io//Widget',
    ]);
  });

  it('the core group always resolves to v1 through its hint or discovery', () => {
    expect(recordedKinds(instance({}, ['/v1/Secret']), [])).toEqual(['/v1/Secret']);
  });
});
