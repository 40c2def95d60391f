// The names of a kind a Template publishes (ADR 0032): its defaults, its CRD's name, and the
// groups no Template may publish, with the allowance the platform team gives per namespace
// (--api-groups). Pure.
import type { ApiSpec, Template } from '../../api/template.ts';
import { ANNOTATION_PUBLISHED_BY, GROUP } from '../../api/well-known.ts';
import { failure, success, type Outcome, type Problem } from '../shared/problem.ts';

/** A published kind's names, its defaults filled in. */
export interface ApiNames {
  group: string;
  version: string;
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  /** `<plural>.<group>`: the CRD's name. */
  crdName: string;
  /** `<group>/<version>`. */
  apiVersion: string;
}

export function apiNames(api: ApiSpec): ApiNames {
  const lower = api.kind.toLowerCase();
  const plural = api.plural ?? `${lower}s`;
  return {
    group: api.group,
    version: api.version,
    kind: api.kind,
    listKind: `${api.kind}List`,
    plural,
    singular: api.singular ?? lower,
    crdName: `${plural}.${api.group}`,
    apiVersion: `${api.group}/${api.version}`,
  };
}

/** The metadata of what Stencil keeps for a published kind (its CRD and ClusterRoles). */
export interface PublishedObjectMeta {
  name: string;
  labels: Record<string, string>;
  /** stencil.dev/template: the publishing Template. */
  annotations: Record<string, string>;
}

/** `<namespace>/<name>` of a Template: how its CRD and roles name it. */
export function publisherOf(template: Template): string {
  return `${template.metadata.namespace ?? ''}/${template.metadata.name ?? ''}`;
}

/**
 * Groups nobody may publish, whatever the allowance says: Stencil's own (its kinds would be
 * shadowed), the ones Kubernetes reserves for itself, and single-label groups (the API server
 * refuses a CRD without a dot in its group).
 */
export function reservedGroup(group: string): string | undefined {
  if (!group.includes('.')) return 'a group needs at least one dot';
  const under = (suffix: string): boolean => group === suffix || group.endsWith(`.${suffix}`);
  if (under(GROUP)) return `${GROUP} and its subdomains are Stencil's own`;
  for (const suffix of ['k8s.io', 'kubernetes.io', 'x-k8s.io'])
    if (under(suffix)) return `${suffix} and its subdomains are reserved by Kubernetes`;
  return undefined;
}

/** Which groups Templates in which namespaces may publish; `*` is every namespace. */
export type ApiAllowance = ReadonlyMap<string, ReadonlySet<string>>;

export const NO_API_ALLOWANCE: ApiAllowance = new Map();

/**
 * Parses `--api-groups`: `namespace=group,group;namespace=group`. Groups are exact names, not
 * patterns, so the chart can render the operator's RBAC for exactly these groups.
 */
export function parseApiAllowance(text: string): Outcome<ApiAllowance> {
  const allowance = new Map<string, Set<string>>();
  const problems: Problem[] = [];
  const problem = (message: string): void => {
    problems.push({ path: 'api-groups', reason: 'InvalidFlag', message });
  };
  for (const entry of text.split(';').map((e) => e.trim())) {
    if (entry === '') continue;
    const at = entry.indexOf('=');
    const namespace = at < 0 ? '' : entry.slice(0, at).trim();
    if (at < 0 || namespace === '') {
      problem(`"${entry}" is not namespace=group,group`);
      continue;
    }
    const groups = allowance.get(namespace) ?? new Set<string>();
    for (const group of entry
      .slice(at + 1)
      .split(',')
      .map((g) => g.trim())
      .filter(Boolean)) {
      const reserved = reservedGroup(group);
      if (reserved) problem(`group "${group}" cannot be allowed: ${reserved}`);
      else if (!DNS_SUBDOMAIN.test(group)) problem(`group "${group}" is not a DNS subdomain`);
      else groups.add(group);
    }
    allowance.set(namespace, groups);
  }
  return problems.length > 0 ? failure(problems) : success(allowance);
}

const DNS_SUBDOMAIN =
  /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * Why a Template in `namespace` may not publish `group`, or undefined when it may. Without an
 * allowance (offline, none given) only the reserved groups are refused.
 */
export function groupRefusal(
  allowance: ApiAllowance | undefined,
  namespace: string,
  group: string,
): string | undefined {
  const reserved = reservedGroup(group);
  if (reserved) return `the group ${group} cannot be published: ${reserved}`;
  if (!allowance) return undefined;
  if (allowance.get(namespace)?.has(group) || allowance.get('*')?.has(group)) return undefined;
  return (
    `the group ${group} is not allowed for Templates in namespace ${namespace}: the operator's ` +
    `--api-groups (chart value typedApis.allow) must list it for this namespace`
  );
}

/**
 * The name a parameter has in a CEL expression: Kubernetes escapes `__`, `.`, `-` and `/` and
 * the CEL keywords in property names (apiextensions "Escaping").
 */
export function celFieldName(name: string): string {
  if (CEL_KEYWORDS.has(name)) return `__${name}__`;
  return name.replaceAll('__', '__underscores__');
}

const CEL_KEYWORDS = new Set([
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);

/** What the operator watches of a CRD Stencil keeps: its kind, served version and publisher. */
export interface PublishedCrd {
  group: string;
  version: string;
  kind: string;
  plural: string;
  publisher: { namespace: string; name: string };
}

interface CrdObject {
  metadata: { annotations?: Record<string, string> };
  spec?: {
    group?: string;
    names?: { kind?: string; plural?: string };
    versions?: { name?: string; served?: boolean; storage?: boolean }[];
  };
  status?: { conditions?: { type?: string; status?: string }[] };
}

/** The Template a CRD Stencil keeps names as its publisher (its annotation), if any. */
export function publisherOfCrd(crd: {
  metadata: { annotations?: Record<string, string> };
}): { namespace: string; name: string } | undefined {
  const publisher = crd.metadata.annotations?.[ANNOTATION_PUBLISHED_BY];
  const slash = publisher?.indexOf('/') ?? -1;
  if (!publisher || slash < 0) return undefined;
  return { namespace: publisher.slice(0, slash), name: publisher.slice(slash + 1) };
}

/** Whether `crd` is the one `template` publishes (by the annotation Stencil writes on it). */
export function isPublishedBy(
  crd: { metadata: { annotations?: Record<string, string> } },
  template: Template,
): boolean {
  return crd.metadata.annotations?.[ANNOTATION_PUBLISHED_BY] === publisherOf(template);
}

/**
 * The published kind a CRD Stencil keeps stands for, once the API server serves it (Established);
 * undefined before, or for a CRD without its Template's annotation.
 */
export function publishedCrdOf(crd: CrdObject): PublishedCrd | undefined {
  const publisher = publisherOfCrd(crd);
  const established = crd.status?.conditions?.some(
    (c) => c.type === 'Established' && c.status === 'True',
  );
  const version = crd.spec?.versions?.find((v) => v.served !== false && v.storage)?.name;
  const { group, names } = crd.spec ?? {};
  if (!publisher || !established || !version || !group) return undefined;
  if (!names?.kind || !names.plural) return undefined;
  return { group, version, kind: names.kind, plural: names.plural, publisher };
}
