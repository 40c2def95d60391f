// The objects integration tests apply, built in one place so that a test states only what its
// scenario is about (namespace, name, the spec fields it exercises). The shapes are those a user
// writes (a Secret's stringData, a templateRef without namespace for a Template beside the
// instance); test/support/builders.ts holds the fixed examples of the unit tests, reused here
// where the shape is the same. Arguments start with the namespace, then the name.
import type { KubeObject } from '../../../src/api/object-meta.ts';
import { API_VERSION } from '../../../src/api/well-known.ts';
import { aConfigMap, aSecret } from '../../support/builders.ts';

/** A body rendering one empty ConfigMap named after the instance. */
export { CONFIG_MAP_BODY } from '../../support/builders.ts';

/** Labels and annotations, for the objects that need them. */
export interface Marks {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** The templateRef of an instance: a name (the Template beside it) or the whole reference. */
export type TemplateRefInput = string | { name: string; namespace?: string; revision?: number };

function metadata(
  namespace: string | undefined,
  name: string,
  marks: Marks,
): KubeObject['metadata'] {
  return {
    name,
    ...(namespace === undefined ? {} : { namespace }),
    ...(marks.labels ? { labels: marks.labels } : {}),
    ...(marks.annotations ? { annotations: marks.annotations } : {}),
  };
}

/** An object of `kind` with its metadata, and `body` beside it (spec, stringData ...). */
function object(
  apiVersion: string,
  kind: string,
  id: { namespace?: string; name: string },
  marks: Marks,
  body: Record<string, unknown>,
): KubeObject {
  return { apiVersion, kind, metadata: metadata(id.namespace, id.name, marks), ...body };
}

/**
 * A Template with `spec` as given: a test names the fields it is about (handlebars, sync,
 * parameters, targetNamespaces, rollout ...); nothing is added, so a field it leaves out takes
 * the CRD's default.
 */
export function template(
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
  marks: Marks = {},
): KubeObject {
  return object(API_VERSION, 'Template', { namespace, name }, marks, { spec });
}

/**
 * A TemplateInstance of `templateRef` with `parameters`; `spec` adds other fields (ttl, sync
 * ...) and `marks` labels or annotations.
 */
export function instance(
  namespace: string,
  name: string,
  templateRef: TemplateRefInput,
  parameters: unknown[] = [],
  { spec = {}, ...marks }: Marks & { spec?: Record<string, unknown> } = {},
): KubeObject {
  const ref = typeof templateRef === 'string' ? { name: templateRef } : templateRef;
  return object(API_VERSION, 'TemplateInstance', { namespace, name }, marks, {
    spec: { templateRef: ref, parameters, ...spec },
  });
}

/** A cluster-scoped TemplateInstanceSet with `spec` as given. */
export function instanceSet(
  name: string,
  spec: Record<string, unknown>,
  marks: Marks = {},
): KubeObject {
  return object(API_VERSION, 'TemplateInstanceSet', { name }, marks, { spec });
}

/** A Secret as a user writes it: `stringData`, which the API server encodes into `data`. */
export function secret(
  namespace: string,
  name: string,
  stringData: Record<string, string>,
  marks: Marks = {},
): KubeObject {
  return object('v1', 'Secret', { namespace, name }, marks, { stringData });
}

/** A Secret whose `data` holds these bytes (binary values, which stringData cannot carry). */
export function binarySecret(
  namespace: string,
  name: string,
  data: Record<string, string | Uint8Array>,
): KubeObject {
  return aSecret(name, namespace, data);
}

export function configMap(
  namespace: string,
  name: string,
  data: Record<string, string>,
  marks: Marks = {},
): KubeObject {
  return { ...aConfigMap(name, namespace, data), metadata: metadata(namespace, name, marks) };
}

/** A parameter's `valueFrom` reading a key of a Secret in the instance's namespace. */
export function fromSecret(
  name: string,
  key: string,
): { secretKeyRef: { name: string; key: string } } {
  return { secretKeyRef: { name, key } };
}

/** A parameter's `valueFrom` reading a key of a ConfigMap in the instance's namespace. */
export function fromConfigMap(
  name: string,
  key: string,
): { configMapKeyRef: { name: string; key: string } } {
  return { configMapKeyRef: { name, key } };
}
