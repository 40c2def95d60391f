// Whether a published kind's names would shadow a resource the cluster already serves (ADR 0032,
// "Names a published kind may not take"). kubectl resolves a kind, a plural, a singular or a short
// name across every group, so `kubectl get tpli` would reach a new kind with short name `tpli`
// instead of TemplateInstances, whatever its group. Pure: the operator gives it what discovery
// lists; offline, Stencil's own API is all that is known.
import { TemplateReason } from '../../api/condition.ts';
import type { ApiSpec } from '../../api/template.ts';
import {
  GROUP,
  TEMPLATE_INSTANCE_KIND,
  TEMPLATE_INSTANCE_PLURAL,
  TEMPLATE_INSTANCE_SET_KIND,
  TEMPLATE_INSTANCE_SET_PLURAL,
  TEMPLATE_KIND,
  TEMPLATE_PLURAL,
  TEMPLATE_REVISION_KIND,
  TEMPLATE_REVISION_PLURAL,
} from '../../api/well-known.ts';
import type { Problem } from '../shared/problem.ts';
import { apiNames } from './api-names.ts';

/** A resource the API server serves, with every name kubectl resolves it by. */
export interface ServedResource {
  /** '' for the core group. */
  group: string;
  kind: string;
  plural: string;
  /** Discovery's singular name; kubectl falls back to the kind in lower case. */
  singular?: string;
  shortNames?: readonly string[];
}

/** Stencil's own API (config/crd): no published kind may take any of these names. */
export const STENCIL_RESOURCES: readonly ServedResource[] = [
  own(TEMPLATE_KIND, TEMPLATE_PLURAL, 'tpl'),
  own(TEMPLATE_INSTANCE_KIND, TEMPLATE_INSTANCE_PLURAL, 'tpli'),
  own(TEMPLATE_REVISION_KIND, TEMPLATE_REVISION_PLURAL, 'tplrev'),
  own(TEMPLATE_INSTANCE_SET_KIND, TEMPLATE_INSTANCE_SET_PLURAL, 'tplis'),
];

function own(kind: string, plural: string, shortName: string): ServedResource {
  return { group: GROUP, kind, plural, singular: kind.toLowerCase(), shortNames: [shortName] };
}

/** `<plural>.<group>`, or the plural alone for the core group: how a resource is named here. */
export function resourceName(resource: { group: string; plural: string }): string {
  return resource.group ? `${resource.plural}.${resource.group}` : resource.plural;
}

/** One name a published kind would be known by, and the field of `spec.api` it comes from. */
interface KindName {
  path: string;
  /** How a message names it: "the kind", "the short name", ... */
  role: string;
  value: string;
  /** Defaulted from the kind rather than given. */
  defaulted?: boolean;
}

function namesOf(api: ApiSpec): KindName[] {
  const names = apiNames(api);
  return [
    { path: 'spec.api.kind', role: 'the kind', value: api.kind },
    {
      path: 'spec.api.plural',
      role: 'the plural',
      value: names.plural,
      defaulted: api.plural === undefined,
    },
    {
      path: 'spec.api.singular',
      role: 'the singular',
      value: names.singular,
      defaulted: api.singular === undefined,
    },
    ...(api.shortNames ?? []).map((value, at) => ({
      path: `spec.api.shortNames[${at}]`,
      role: 'the short name',
      value,
    })),
  ];
}

/**
 * What each name kubectl resolves a served resource by (in lower case) is to it: `kind and
 * singular`, `short name`.
 */
function rolesOf(resource: ServedResource): Map<string, string> {
  const roles = new Map<string, string[]>();
  const add = (name: string | undefined, role: string): void => {
    const key = name?.toLowerCase();
    if (!key) return;
    const known = roles.get(key) ?? [];
    if (!known.includes(role)) roles.set(key, [...known, role]);
  };
  add(resource.kind, 'kind');
  add(resource.plural, 'plural');
  add(resource.singular || resource.kind, 'singular');
  for (const short of resource.shortNames ?? []) add(short, 'short name');
  return new Map([...roles].map(([key, words]) => [key, words.join(' and ')]));
}

export interface ShadowingOptions {
  /**
   * Resources left out of the comparison (`<plural>.<group>`): the Template's own published
   * CRDs, whose names it may keep when it applies them again.
   */
  own?: ReadonlySet<string>;
  /**
   * Names (lower case) the Template's published kind already serves: a collision of one of them
   * is not refused (the name was there first, or before this check existed) but reported in
   * `kept`, so the kind is not made invalid by a resource installed after it.
   */
  kept?: ReadonlySet<string>;
}

export interface Shadowing {
  /** Names the kind may not take: Valid=False, reason APIShadowsResource. */
  problems: Problem[];
  /** Collisions of names the kind already serves, one sentence each. */
  kept: string[];
}

/**
 * The names of `api` that a resource in `served` already answers to. Names are compared in lower
 * case, whatever the group, against the other resource's kind, plural, singular and short names.
 */
export function shadowing(
  api: ApiSpec,
  served: readonly ServedResource[],
  options: ShadowingOptions = {},
): Shadowing {
  const others = served
    .filter((r) => !options.own?.has(resourceName(r)))
    .map((r) => ({ resource: r, roles: rolesOf(r) }));
  const problems: Problem[] = [];
  const kept: string[] = [];
  const reported = new Set<string>();
  for (const name of namesOf(api)) {
    const key = name.value.toLowerCase();
    // A plural and a singular that are the same word, or a short name given twice, once.
    if (reported.has(key)) continue;
    const hits = others.flatMap(({ resource, roles }) => {
      const role = roles.get(key);
      return role ? [`${resourceName(resource)} (${resource.kind}) as its ${role}`] : [];
    });
    if (hits.length === 0) continue;
    reported.add(key);
    const shown = [...new Set(hits)];
    const more = shown.length > 3 ? ` and ${shown.length - 3} more` : '';
    const what = `${name.role} ${name.value}${name.defaulted ? ' (defaulted from the kind)' : ''}`;
    const by = `${shown.slice(0, 3).join(', ')}${more}`;
    if (options.kept?.has(key)) {
      kept.push(`${what} is also taken by ${by}: kubectl may resolve "${key}" to either`);
      continue;
    }
    problems.push({
      path: name.path,
      reason: TemplateReason.APIShadowsResource,
      message:
        `${what} is already taken by ${by}; kubectl resolves names across groups, so ` +
        `"kubectl get ${key}" could reach the new kind instead: choose another`,
    });
  }
  return { problems, kept };
}
