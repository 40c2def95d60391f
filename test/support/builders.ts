// Builders for Templates, instances and source objects, with overrides instead of mocks.
import type { KubeObject } from '../../src/api/object-meta.ts';
import type { ParameterDeclaration, Template, TemplateSpec } from '../../src/api/template.ts';
import type { ParameterValue, TemplateInstance } from '../../src/api/template-instance.ts';

export const CONFIG_MAP_BODY =
  'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{instance.name}}\n';

export function aTemplate(
  parameters: ParameterDeclaration[] = [],
  spec: Partial<TemplateSpec> = {},
): Template {
  return {
    apiVersion: 'stencil.dev/v1alpha1',
    kind: 'Template',
    metadata: { name: 'web-app', namespace: 'platform', generation: 1 },
    spec: {
      parameters,
      targetNamespaces: { explicit: { allow: { literal: ['*'] } } },
      handlebars: CONFIG_MAP_BODY,
      ...spec,
    },
  };
}

export function anInstance(
  parameters: ParameterValue[] = [],
  namespace = 'team-a',
): TemplateInstance {
  return {
    apiVersion: 'stencil.dev/v1alpha1',
    kind: 'TemplateInstance',
    metadata: {
      name: 'shop',
      namespace,
      uid: '6c1f0d0e-0000-4000-8000-000000000001',
      generation: 1,
    },
    spec: { templateRef: { name: 'web-app', namespace: 'platform' }, parameters },
  };
}

/** A Secret with `data` encoded from these values (text, or bytes for binary data). */
export function aSecret(
  name: string,
  namespace: string,
  data: Record<string, string | Uint8Array>,
): KubeObject {
  const encoded = Object.fromEntries(
    Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
  );
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace }, data: encoded };
}

export function aConfigMap(
  name: string,
  namespace: string,
  data: Record<string, string>,
  binaryData?: Record<string, string>,
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace },
    data,
    ...(binaryData ? { binaryData } : {}),
  };
}

export function aService(
  name: string,
  namespace: string,
  labels: Record<string, string> = {},
  clusterIP = '10.0.0.10',
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace, labels },
    spec: { clusterIP },
  };
}
