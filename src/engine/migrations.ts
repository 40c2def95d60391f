// Parameter and object migrations a Template revision declares (docs/adr/0012), so that an
// instance moving across a revision keeps working with nobody editing it and nothing deleted and
// recreated. Pure: the instance's spec and status in, what to resolve and render with out.
import type { KubeObject } from '../api/object-meta.ts';
import type { Template } from '../api/template.ts';
import type {
  ParameterValue,
  RenderedResourceRef,
  TemplateInstance,
} from '../api/template-instance.ts';

/**
 * The instance as the Template's parameters see it: a value the instance gives under a
 * parameter's old name counts under its new one, as long as the Template no longer declares the
 * old name, declares the new one, and the instance does not set the new one itself.
 */
export function migrateParameters(
  instance: TemplateInstance,
  template: Template,
): TemplateInstance {
  const declared = new Set((template.spec.parameters ?? []).map((p) => p.name));
  const given = instance.spec.parameters ?? [];
  let parameters = given;
  for (const { renameParameter: rename } of template.spec.migrations ?? []) {
    if (!rename || declared.has(rename.from) || !declared.has(rename.to)) continue;
    if (parameters.some((p) => p.name === rename.to)) continue;
    parameters = parameters.map((p) => (p.name === rename.from ? { ...p, name: rename.to } : p));
  }
  parameters = movedToSources(parameters, template, instance);
  if (parameters === given) return instance;
  return { ...instance, spec: { ...instance.spec, parameters } };
}

/** `valueFrom` migrations: a literal becomes the fallback of a read from the named key. */
function movedToSources(
  parameters: ParameterValue[],
  template: Template,
  instance: TemplateInstance,
): ParameterValue[] {
  let result = parameters;
  for (const { valueFrom: move } of template.spec.migrations ?? []) {
    if (!move) continue;
    const ref = move.secretKeyRef ?? move.configMapKeyRef;
    if (!ref) continue;
    const key = { name: nameFor(ref.name, instance), key: ref.key };
    const source = move.secretKeyRef ? { secretKeyRef: key } : { configMapKeyRef: key };
    const literal = (p: ParameterValue): boolean =>
      p.name === move.parameter && p.valueFrom === undefined && p.value !== undefined;
    if (!result.some(literal)) continue;
    result = result.map((p) =>
      literal(p) ? { name: p.name, valueFrom: source, defaultValue: p.value } : p,
    );
  }
  return result;
}

/** `{{instance.name}}` and `{{instance.namespace}}` in a migration's object name. */
function nameFor(pattern: string, instance: TemplateInstance): string {
  return pattern
    .replaceAll('{{instance.name}}', instance.metadata.name ?? '')
    .replaceAll('{{instance.namespace}}', instance.metadata.namespace ?? '');
}

/**
 * Kubernetes cannot rename an object. An object this revision renders as `to` is applied under
 * its old name `from` when the instance already owns an object of that name (it was rendered
 * before the rename): the live object, its uid and its data stay; only instances that never had
 * it get the new name.
 */
export function migrateObjectNames(
  objects: KubeObject[],
  template: Template,
  instance: TemplateInstance,
): KubeObject[] {
  const owned: RenderedResourceRef[] = instance.status?.renderedResources ?? [];
  const renames = (template.spec.migrations ?? []).flatMap((m) =>
    m.renameObject ? [m.renameObject] : [],
  );
  if (renames.length === 0 || owned.length === 0) return objects;
  return objects.map((object) => {
    for (const rename of renames) {
      if (object.apiVersion !== rename.apiVersion || object.kind !== rename.kind) continue;
      if (object.metadata.name !== nameFor(rename.to, instance)) continue;
      const from = nameFor(rename.from, instance);
      const had = owned.some(
        (r) =>
          r.apiVersion === rename.apiVersion &&
          r.kind === rename.kind &&
          r.name === from &&
          (r.namespace ?? '') === (object.metadata.namespace ?? r.namespace ?? ''),
      );
      if (had) return { ...object, metadata: { ...object.metadata, name: from } };
    }
    return object;
  });
}
