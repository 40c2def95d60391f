// Parameter and object migrations a Template revision declares (docs/adr/0012), so that an
// instance moving across a revision keeps working with nobody editing it and nothing deleted and
// recreated. Pure: the instance's spec and status in, what to resolve and render with out.
import type { KubeObject } from '../../api/object-meta.ts';
import { ANNOTATION_CONSENT_SECRET_MIGRATION } from '../../api/well-known.ts';
import type { Template } from '../../api/template.ts';
import type {
  ParameterValue,
  RenderedResourceRef,
  TemplateInstance,
} from '../../api/template-instance.ts';

/**
 * The instance as the Template's parameters see it: a value the instance gives under a
 * parameter's old name counts under its new one, as long as the Template no longer declares the
 * old name, declares the new one, and the instance does not set the new one itself.
 */
export function migrateParameters(
  instance: TemplateInstance,
  template: Template,
): TemplateInstance {
  const given = instance.spec.parameters ?? [];
  const parameters = movedToSources(renamedParameters(instance, template), template, instance);
  if (parameters === given) return instance;
  return { ...instance, spec: { ...instance.spec, parameters } };
}

/** The instance's parameters after the renameParameter migrations. */
function renamedParameters(instance: TemplateInstance, template: Template): ParameterValue[] {
  const declared = new Set((template.spec.parameters ?? []).map((p) => p.name));
  let parameters = instance.spec.parameters ?? [];
  for (const { renameParameter: rename } of template.spec.migrations ?? []) {
    if (!rename || declared.has(rename.from) || !declared.has(rename.to)) continue;
    if (parameters.some((p) => p.name === rename.to)) continue;
    parameters = parameters.map((p) => (p.name === rename.from ? { ...p, name: rename.to } : p));
  }
  return parameters;
}

/** The parameters the instance's consent annotation names. */
function consented(instance: TemplateInstance): Set<string> {
  const text = instance.metadata.annotations?.[ANNOTATION_CONSENT_SECRET_MIGRATION];
  if (typeof text !== 'string') return new Set();
  return new Set(
    text
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== ''),
  );
}

/** A `valueFrom` migration to a Secret that waits for the instance owner's consent (ADR 0019). */
export interface PendingSecretMigration {
  parameter: string;
  /** The Secret the migration would read, in the instance's namespace. */
  secret: string;
  key: string;
}

/**
 * The Secret migrations that would apply to this instance (it gives the parameter as a literal)
 * but that its owner has not consented to: a Template may not turn an instance's literal into a
 * read of a Secret the instance never named (ADR 0019). For the ParametersValid message.
 */
export function pendingSecretMigrations(
  instance: TemplateInstance,
  template: Template,
): PendingSecretMigration[] {
  const consent = consented(instance);
  const given = renamedParameters(instance, template);
  return (template.spec.migrations ?? []).flatMap(({ valueFrom: move }) => {
    if (!move?.secretKeyRef || consent.has(move.parameter)) return [];
    const literal = given.some(
      (p) => p.name === move.parameter && p.valueFrom === undefined && p.value !== undefined,
    );
    if (!literal) return [];
    const secret = `${instance.metadata.namespace ?? ''}/${nameFor(move.secretKeyRef.name, instance)}`;
    return [{ parameter: move.parameter, secret, key: move.secretKeyRef.key }];
  });
}

/** The message that tells the owner what waits and how to consent (never a value). */
export function pendingMigrationMessage(pending: PendingSecretMigration): string {
  return `the Template migrates parameter "${pending.parameter}" to a read of Secret ${pending.secret} (key "${pending.key}"), which this instance does not name: its literal value stays in use until the instance consents with the annotation ${ANNOTATION_CONSENT_SECRET_MIGRATION}: "${pending.parameter}" (or sets valueFrom itself)`;
}

/**
 * `valueFrom` migrations: a literal becomes the fallback of a read from the named key. A move to
 * a ConfigMap applies as is; a move to a Secret only for parameters the instance's consent
 * annotation names.
 */
function movedToSources(
  parameters: ParameterValue[],
  template: Template,
  instance: TemplateInstance,
): ParameterValue[] {
  let result = parameters;
  const consent = consented(instance);
  for (const { valueFrom: move } of template.spec.migrations ?? []) {
    if (!move) continue;
    const ref = move.secretKeyRef ?? move.configMapKeyRef;
    if (!ref) continue;
    if (move.secretKeyRef && !consent.has(move.parameter)) continue;
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
