// A typed instance (ADR 0032) read offline: an object of the kind the Template publishes is
// defaulted and checked against the CRD the operator would keep, as the API server would at
// admission, then read as the TemplateInstance the engine renders (instanceView).
import type { JsonValue } from '../api/object-meta.ts';
import type { Template } from '../api/template.ts';
import type { TemplateInstance } from '../api/template-instance.ts';
import { UsageError } from '../command-line.ts';
import type { OfflineSchemas } from '../engine/object-schema/object-schema.ts';
import { formatProblem } from '../engine/shared/problem.ts';
import { publishedCrd } from '../engine/typed-api/api-crd.ts';
import { withDefaults } from '../engine/typed-api/api-defaults.ts';
import { apiNames } from '../engine/typed-api/api-names.ts';
import { instanceView, type TypedInstance } from '../engine/typed-api/instance-view.ts';
import { kindOf, readDocuments } from './manifest-files.ts';

/** Whether `value` is an object of the kind `template` publishes. */
export function isTypedInstanceOf(value: unknown, template: Template | undefined): boolean {
  const api = template?.spec.api;
  if (!api) return false;
  const names = apiNames(api);
  const object = value as { apiVersion?: unknown; kind?: unknown } | null;
  return object?.apiVersion === names.apiVersion && object.kind === names.kind;
}

/**
 * The typed instance `value` of `file`, defaulted and checked against the Template's CRD, read as
 * a TemplateInstance; its namespace defaults as kubectl's does, and the Template's to it.
 */
export async function typedInstanceOf(
  file: string,
  value: unknown,
  template: Template,
  schemas: OfflineSchemas,
): Promise<TemplateInstance> {
  const crd = publishedCrd(template);
  if (!crd.ok)
    throw new UsageError(
      `${file}: the Template's spec.api makes no CRD: ${crd.problems.map(formatProblem).join('; ')}`,
    );
  const root = crd.value.spec.versions[0]!.schema.openAPIV3Schema;
  const typed = withDefaults(value as JsonValue, root) as unknown as TypedInstance;
  const namespace = typed.metadata.namespace ?? 'default';
  const object = { ...typed, metadata: { ...typed.metadata, namespace } };
  const checks = schemas.withCrds([crd.value]);
  await checks.prepare([object]);
  const verdict = checks.check(object);
  if (verdict.checked && verdict.problems.length > 0)
    throw new UsageError(
      `${file}: invalid ${object.kind}: ${verdict.problems.map(formatProblem).join('; ')}`,
    );
  return instanceView(object, {
    namespace: template.metadata.namespace ?? namespace,
    name: template.metadata.name ?? '',
  });
}

/** The one instance of `file`: a TemplateInstance, or an object of the kind `template` publishes. */
export function instanceDocument(file: string, template: Template | undefined): unknown {
  const docs = readDocuments(file).filter(
    (d) => kindOf(d.value) === 'TemplateInstance' || isTypedInstanceOf(d.value, template),
  );
  if (docs.length !== 1) {
    const api = template?.spec.api;
    const typed = api ? ` or ${api.kind} (${apiNames(api).apiVersion})` : '';
    throw new UsageError(
      `${file}: expected exactly one TemplateInstance${typed}, found ${docs.length}`,
    );
  }
  return docs[0]!.value;
}
