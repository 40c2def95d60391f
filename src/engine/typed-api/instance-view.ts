// A typed instance read as the TemplateInstance the engine reconciles (ADR 0032): the one place
// where the two differ. Everything downstream (evaluation, decision, policy, watches, status)
// takes the view; writes address the typed object by its own apiVersion and kind, and touch its
// metadata and status only, which the view shares with it. Pure.
import type { JsonValue, ObjectMeta } from '../../api/object-meta.ts';
import type {
  ParameterValue,
  TemplateInstance,
  TemplateInstanceStatus,
  ValueSource,
} from '../../api/template-instance.ts';
import { isJsonObject } from '../shared/json-map.ts';
import { PIN_FIELD, TTL_FIELD, VALUE_FROM_FIELD } from './api-crd.ts';

/** An object of a published kind, as the API server returns it. */
export interface TypedInstance {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec?: { [field: string]: JsonValue };
  status?: TemplateInstanceStatus;
}

/** A source with the value to use when it fails, as `spec.valueFrom.<parameter>` holds it. */
type SourceField = ValueSource & { defaultValue?: JsonValue };

/**
 * The TemplateInstance a typed instance stands for: `templateRef` names the publishing Template
 * (`revision` from `spec.templateRevision`), `ttl` is its own, and each parameter set in `spec`
 * or `spec.valueFrom` is one entry, in name order; a source wins over the literal field (which
 * the API server may have filled with its default).
 */
export function instanceView(
  object: TypedInstance,
  publisher: { namespace: string; name: string },
): TemplateInstance {
  const spec = object.spec ?? {};
  const sources = isJsonObject(spec[VALUE_FROM_FIELD]) ? spec[VALUE_FROM_FIELD] : {};
  const names = new Set<string>();
  for (const name of [...Object.keys(spec), ...Object.keys(sources)])
    if (name !== VALUE_FROM_FIELD && name !== PIN_FIELD && name !== TTL_FIELD) names.add(name);
  const parameters: ParameterValue[] = [];
  for (const name of [...names].sort()) {
    const source = sources[name];
    if (isJsonObject(source)) {
      const { defaultValue, ...valueFrom } = source as SourceField;
      parameters.push({
        name,
        valueFrom,
        ...(defaultValue === undefined ? {} : { defaultValue }),
      });
    } else if (spec[name] !== undefined) parameters.push({ name, value: spec[name] });
  }
  const pin = spec[PIN_FIELD];
  const ttl = spec[TTL_FIELD];
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    metadata: object.metadata,
    spec: {
      templateRef: {
        name: publisher.name,
        namespace: publisher.namespace,
        ...(typeof pin === 'number' ? { revision: pin } : {}),
      },
      ...(typeof ttl === 'string' ? { ttl } : {}),
      parameters,
    },
    ...(object.status ? { status: object.status } : {}),
  };
}
