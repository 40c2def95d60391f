// Rotation that reaches running pods (issue #14 part 1): a Deployment, StatefulSet or DaemonSet
// annotated `stencil.dev/restart-on-change` gets `stencil.dev/sources-hash` on its pod template,
// a keyed hash of the source values (and rendered ConfigMaps/Secrets) it names. A change of one of
// those rolls its pods; any other change leaves the pod template as it was. Pure.
import { createHmac } from 'node:crypto';
import { InstanceReason } from '../../api/condition.ts';
import type { JsonValue, KubeObject } from '../../api/object-meta.ts';
import {
  ANNOTATION_RESTART_ON_CHANGE,
  ANNOTATION_RESTART_ON_CHANGE_OBJECTS,
  ANNOTATION_SOURCES_HASH,
} from '../../api/well-known.ts';
import { canonicalJson } from '../shared/canonical-json.ts';
import { describeObject } from '../objects/inventory.ts';
import type { ResolvedParameters } from '../parameters/parameters.ts';
import { failure, success, type Outcome } from '../shared/problem.ts';

const WORKLOADS = new Set(['apps/v1/Deployment', 'apps/v1/StatefulSet', 'apps/v1/DaemonSet']);

const list = (text: string | undefined): string[] =>
  (text ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);

/**
 * Stamps each opted-in workload. `true` names every parameter read with valueFrom; otherwise the
 * annotation lists parameter names. `stencil.dev/restart-on-change-objects` adds rendered objects
 * (`Kind/name`, e.g. `ConfigMap/app-config`) whose content counts too. The hash is an HMAC keyed
 * by `salt` (the instance's uid): equal values in two instances give different hashes, and the
 * annotation never shows a value.
 */
export function stampSourcesHash(
  objects: KubeObject[],
  resolved: Pick<ResolvedParameters, 'values' | 'status'>,
  salt: string,
): Outcome<KubeObject[]> {
  const stamped: KubeObject[] = [];
  for (const object of objects) {
    const names = object.metadata.annotations?.[ANNOTATION_RESTART_ON_CHANGE];
    if (names === undefined || names === 'false') {
      stamped.push(object);
      continue;
    }
    if (!WORKLOADS.has(`${object.apiVersion}/${object.kind}`))
      return refused(
        object,
        `${ANNOTATION_RESTART_ON_CHANGE} applies to apps/v1 Deployments, StatefulSets and DaemonSets only`,
      );
    const inputs = consumed(object, names, resolved, objects);
    if (!inputs.ok) return inputs;
    const hash = createHmac('sha256', salt).update(canonicalJson(inputs.value)).digest('hex');
    stamped.push(withPodAnnotation(object, hash.slice(0, 32)));
  }
  return success(stamped);
}

/** What the workload consumes: the named parameters' values and the named objects' content. */
function consumed(
  object: KubeObject,
  names: string,
  resolved: Pick<ResolvedParameters, 'values' | 'status'>,
  objects: KubeObject[],
): Outcome<JsonValue> {
  const sourced = resolved.status.filter((p) => p.valueFrom !== undefined).map((p) => p.name);
  const parameters = names === 'true' ? sourced : list(names);
  const values: Record<string, JsonValue> = {};
  for (const name of parameters) {
    if (!Object.hasOwn(resolved.values, name))
      return refused(
        object,
        `${ANNOTATION_RESTART_ON_CHANGE} names "${name}", which is not a parameter of this Template`,
      );
    values[name] = resolved.values[name]!;
  }
  const contents: Record<string, JsonValue> = {};
  for (const ref of list(object.metadata.annotations?.[ANNOTATION_RESTART_ON_CHANGE_OBJECTS])) {
    const [kind, name] = ref.split('/');
    const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
    if (!found || (kind !== 'ConfigMap' && kind !== 'Secret'))
      return refused(
        object,
        `${ANNOTATION_RESTART_ON_CHANGE_OBJECTS} names "${ref}", which is not a ConfigMap or Secret this Template renders`,
      );
    const { data, stringData, binaryData } = found as {
      data?: JsonValue;
      stringData?: JsonValue;
      binaryData?: JsonValue;
    };
    contents[ref] = {
      data: data ?? null,
      stringData: stringData ?? null,
      binaryData: binaryData ?? null,
    };
  }
  return success({ parameters: values, objects: contents });
}

function withPodAnnotation(object: KubeObject, hash: string): KubeObject {
  const spec = (object.spec ?? {}) as {
    template?: { metadata?: { annotations?: Record<string, string> } };
  };
  const template = spec.template ?? {};
  const metadata = template.metadata ?? {};
  return {
    ...object,
    spec: {
      ...spec,
      template: {
        ...template,
        metadata: {
          ...metadata,
          annotations: { ...(metadata.annotations ?? {}), [ANNOTATION_SOURCES_HASH]: hash },
        },
      },
    },
  };
}

function refused(object: KubeObject, message: string): Outcome<never> {
  return failure([
    {
      path: 'spec.handlebars',
      reason: InstanceReason.TemplateExecutionFailed,
      message: `${describeObject(object)}: ${message}`,
    },
  ]);
}
