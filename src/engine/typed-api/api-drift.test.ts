import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../api/object-meta.ts';
import type { Template } from '../../api/template.ts';
import { publishedCrd, type CustomResourceDefinition } from './api-crd.ts';
import { crdDrift, crdRepair, roleDrift, schemaWrittenByOthers } from './api-drift.ts';
import { publishedRoles, type ClusterRole } from './api-roles.ts';

const TEMPLATE: Template = {
  apiVersion: 'stencil.dev/v1alpha1',
  kind: 'Template',
  metadata: { name: 'web-app', namespace: 'platform' },
  spec: {
    api: { group: 'apps.example.com', version: 'v1', kind: 'WebApp', shortNames: ['wa'] },
    parameters: [{ name: 'image', type: 'string' }],
    handlebars: 'kind: ConfigMap',
  },
};

function generated(): CustomResourceDefinition {
  const crd = publishedCrd(TEMPLATE);
  if (!crd.ok) throw new Error(JSON.stringify(crd.problems));
  return crd.value;
}

/** The CRD as the API server returns it: the defaults it fills in, status, server metadata. */
function asServed(crd: CustomResourceDefinition): KubeObject {
  const live = structuredClone(crd) as unknown as KubeObject & { spec: Record<string, unknown> };
  live.spec.conversion = { strategy: 'None' };
  live.metadata = { ...live.metadata, uid: 'u1', resourceVersion: '7' };
  live.status = { acceptedNames: crd.spec.names, storedVersions: ['v1'] };
  return live;
}

type Edit = (spec: {
  names: Record<string, unknown>;
  versions: { schema: { openAPIV3Schema: Record<string, unknown> } }[];
  [key: string]: unknown;
}) => void;

describe("a generated CRD's hand edits", () => {
  it('finds none in the CRD as the API server stores it', () => {
    expect(crdDrift(generated(), asServed(generated()))).toBeUndefined();
  });

  it.each<[string, Edit, string]>([
    [
      'x-kubernetes-preserve-unknown-fields on the root schema',
      (spec) => {
        spec.versions[0]!.schema.openAPIV3Schema['x-kubernetes-preserve-unknown-fields'] = true;
      },
      'spec.versions[0].schema.openAPIV3Schema.x-kubernetes-preserve-unknown-fields',
    ],
    [
      'a short name',
      (spec) => {
        spec.names.shortNames = ['wa', 'po'];
      },
      'spec.names.shortNames[1]',
    ],
    [
      'a conversion webhook',
      (spec) => {
        spec.conversion = { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'] } };
      },
      'spec.conversion.strategy',
    ],
    [
      'a removed category',
      (spec) => {
        delete spec.names.categories;
      },
      'spec.names.categories',
    ],
  ])('finds %s, and the merge patch that takes it back', (_, edit, path) => {
    const live = asServed(generated());
    edit(live.spec as Parameters<Edit>[0]);
    expect(crdDrift(generated(), live)).toBe(path);
    const patch = crdRepair(generated(), live);
    const repaired = { ...live, spec: mergePatch(live.spec, patch) };
    expect(crdDrift(generated(), repaired)).toBeUndefined();
  });

  it("removes what only another manager set: a short name the kind does not have, a webhook's", () => {
    const live = asServed(generated());
    const spec = live.spec as Record<string, Record<string, unknown>>;
    spec.names!.shortNames = ['wa', 'po'];
    spec.conversion = { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'] } };
    spec.preserveUnknownFields = true as unknown as Record<string, unknown>;
    const patch = crdRepair(generated(), live) as Record<string, Record<string, unknown>>;
    expect(patch.names!.shortNames).toEqual(['wa']);
    expect(patch.conversion).toEqual({ strategy: 'None', webhook: null });
    expect(patch.preserveUnknownFields).toBeNull();
  });

  it('tells a schema another manager wrote last from one Stencil applied', () => {
    const live = asServed(generated());
    const entry = (manager: string, fields: Record<string, unknown>): object => ({
      manager,
      operation: manager === 'stencil' ? 'Apply' : 'Update',
      fieldsV1: fields,
    });
    const versions = { 'f:spec': { 'f:versions': {} } };
    const status = { 'f:status': { 'f:conditions': {} } };
    const withManagers = (...entries: object[]): KubeObject => ({
      ...live,
      metadata: { ...live.metadata, managedFields: entries } as KubeObject['metadata'],
    });
    expect(schemaWrittenByOthers(live, 'stencil')).toBe(false);
    expect(
      schemaWrittenByOthers(
        withManagers(entry('stencil', versions), entry('kube-apiserver', status)),
        'stencil',
      ),
    ).toBe(false);
    expect(
      schemaWrittenByOthers(
        withManagers(
          entry('stencil', { 'f:spec': { 'f:group': {} } }),
          entry('kubectl-edit', versions),
        ),
        'stencil',
      ),
    ).toBe(true);
  });
});

describe("a generated ClusterRole's hand edits", () => {
  const roles = (aggregate = false): ClusterRole[] =>
    publishedRoles({
      ...TEMPLATE,
      spec: {
        ...TEMPLATE.spec,
        api: { ...TEMPLATE.spec.api!, aggregateToDefaultRoles: aggregate },
      },
    });
  const live = (
    role: ClusterRole,
    change: (o: Record<string, unknown>) => void = () => {},
  ): KubeObject => {
    const object = structuredClone(role) as unknown as KubeObject;
    object.metadata = { ...object.metadata, labels: { ...role.metadata.labels, team: 'a' } };
    change(object);
    return object;
  };

  it('finds none in the role as applied, whatever other labels it carries', () => {
    for (const role of [...roles(), ...roles(true)])
      expect(roleDrift(role, live(role))).toEqual({ fields: [], replace: false, strayLabels: [] });
  });

  it('finds a widened rule, an aggregationRule (replaced) and an aggregation label not asked for', () => {
    const [edit] = roles();
    const widened = live(edit!, (o) => {
      (o.rules as { verbs: string[] }[])[1]!.verbs.push('update');
    });
    expect(roleDrift(edit!, widened)).toEqual({
      fields: ['rules[1].verbs[3]'],
      replace: false,
      strayLabels: [],
    });
    const aggregated = live(edit!, (o) => {
      o.aggregationRule = { clusterRoleSelectors: [{ matchLabels: { any: 'role' } }] };
    });
    expect(roleDrift(edit!, aggregated)).toMatchObject({
      fields: ['aggregationRule'],
      replace: true,
    });
    const label = 'rbac.authorization.k8s.io/aggregate-to-view';
    const labelled = live(edit!, (o) => {
      (o.metadata as { labels: Record<string, string> }).labels[label] = 'true';
    });
    expect(roleDrift(edit!, labelled)).toEqual({
      fields: [`label ${label}`],
      replace: false,
      strayLabels: [label],
    });
    const [aggregatedEdit] = roles(true);
    expect(roleDrift(aggregatedEdit!, live(aggregatedEdit!)).strayLabels).toEqual([]);
  });
});

/** RFC 7386, as the API server applies a merge patch. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const result: Record<string, unknown> =
    typeof target === 'object' && target !== null && !Array.isArray(target)
      ? { ...(target as Record<string, unknown>) }
      : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}
