import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import type { ApiSpec, Template } from '../../api/template.ts';
import { apiProblems } from './api-checks.ts';
import { publishedCrd } from './api-crd.ts';
import { shadowing, STENCIL_RESOURCES, type ServedResource } from './api-shadowing.ts';

const served = (
  group: string,
  kind: string,
  plural: string,
  shortNames: string[] = [],
  singular = kind.toLowerCase(),
): ServedResource => ({ group, kind, plural, singular, shortNames });

/** A few of what a cluster serves, Stencil's own API among them, and a published kind. */
const CLUSTER: ServedResource[] = [
  ...STENCIL_RESOURCES,
  served('', 'Pod', 'pods', ['po']),
  served('', 'ConfigMap', 'configmaps', ['cm']),
  served('', 'Service', 'services', ['svc']),
  served('', 'Event', 'events', ['ev']),
  served('events.k8s.io', 'Event', 'events', ['ev']),
  served('apps', 'Deployment', 'deployments', ['deploy']),
  // Discovery without a singular name: kubectl falls back to the kind.
  { group: 'example.org', kind: 'Gadget', plural: 'gadgets', shortNames: [] },
  // Published by the Template under test, and by another one.
  served('apps.example.com', 'WebApp', 'webapps', ['wa']),
  served('data.example.com', 'Database', 'databases', ['db']),
];

const API: ApiSpec = { group: 'apps.example.com', version: 'v1', kind: 'WebApp' };
const OWN = new Set(['webapps.apps.example.com']);

describe('the names a published kind may not take', () => {
  it.each<[string, Partial<ApiSpec>, string[]]>([
    ['its own CRD, applied again, shadows nothing', { shortNames: ['wa'] }, []],
    [
      "Stencil's TemplateInstance, by kind and by the defaulted plural",
      { kind: 'TemplateInstance' },
      ['spec.api.kind', 'spec.api.plural'],
    ],
    [
      'short names of TemplateInstances, Templates, Pods and ConfigMaps',
      { shortNames: ['wa', 'tpli', 'tpl', 'po', 'cm'] },
      [
        'spec.api.shortNames[1]',
        'spec.api.shortNames[2]',
        'spec.api.shortNames[3]',
        'spec.api.shortNames[4]',
      ],
    ],
    [
      "a kind that is another kind's singular, whatever its own plural",
      { kind: 'Pod', plural: 'mypods', singular: 'mypod' },
      ['spec.api.kind'],
    ],
    [
      'a kind that differs only in case',
      { kind: 'Configmap' },
      ['spec.api.kind', 'spec.api.plural'],
    ],
    [
      'a plural of another group (kubectl resolves plurals across groups)',
      { kind: 'Rollout', plural: 'deployments' },
      ['spec.api.plural'],
    ],
    ['a singular', { kind: 'Svc2', singular: 'service' }, ['spec.api.singular']],
    ['a short name that is a plural', { shortNames: ['services'] }, ['spec.api.shortNames[0]']],
    ['a short name that is a kind', { shortNames: ['deployment'] }, ['spec.api.shortNames[0]']],
    [
      'the kind of discovery without a singular',
      { kind: 'Gadget' },
      ['spec.api.kind', 'spec.api.plural'],
    ],
    [
      'the names of a kind another Template publishes in another group',
      { kind: 'Database', group: 'apps.example.com' },
      ['spec.api.kind', 'spec.api.plural'],
    ],
    [
      'a short name given twice is said once',
      { shortNames: ['po', 'po'] },
      ['spec.api.shortNames[0]'],
    ],
    ['names nothing else answers to', { kind: 'Shop', shortNames: ['shp'] }, []],
  ])('%s', (_, change, paths) => {
    const { problems } = shadowing({ ...API, ...change }, CLUSTER, { own: OWN });
    expect(problems.map((p) => p.path)).toEqual(paths);
    for (const problem of problems) expect(problem.reason).toBe('APIShadowsResource');
  });

  it('names the field, the name and the resource it would shadow', () => {
    const { problems } = shadowing({ ...API, shortNames: ['wa', 'tpli'] }, CLUSTER, { own: OWN });
    expect(problems).toEqual([
      {
        path: 'spec.api.shortNames[1]',
        reason: 'APIShadowsResource',
        message:
          'the short name tpli is already taken by templateinstances.stencil.dev ' +
          '(TemplateInstance) as its short name; kubectl resolves names across groups, so ' +
          '"kubectl get tpli" could reach the new kind instead: choose another',
      },
    ]);
    const [events] = shadowing({ ...API, kind: 'Event' }, CLUSTER).problems;
    expect(events?.message).toContain(
      'the kind Event is already taken by events (Event) as its kind and singular, ' +
        'events.events.k8s.io (Event) as its kind and singular;',
    );
    const [plural] = shadowing({ ...API, kind: 'Deployment' }, CLUSTER).problems.slice(1);
    expect(plural?.message).toContain('the plural deployments (defaulted from the kind)');
  });

  it('compares every other resource when the Template has no CRD yet', () => {
    const { problems } = shadowing({ ...API, shortNames: ['wa'] }, CLUSTER);
    expect(problems.map((p) => p.path)).toEqual([
      'spec.api.kind',
      'spec.api.plural',
      'spec.api.shortNames[0]',
    ]);
  });

  it('keeps, and reports, a name the kind already serves that a later resource took too', () => {
    const later = [...CLUSTER, served('tools.example.net', 'Widget', 'widgets', ['wa'])];
    const { problems, kept } = shadowing({ ...API, shortNames: ['wa', 'po'] }, later, {
      own: OWN,
      kept: new Set(['webapp', 'webapps', 'wa']),
    });
    expect(problems.map((p) => p.path)).toEqual(['spec.api.shortNames[1]']);
    expect(kept).toEqual([
      'the short name wa is also taken by widgets.tools.example.net (Widget) as its short name: ' +
        'kubectl may resolve "wa" to either',
    ]);
  });
});

describe("Stencil's own API, offline", () => {
  it('lists every kind, plural, singular and short name of the CRDs in config/crd', () => {
    const dir = join(import.meta.dirname, '../../../config/crd');
    const fromCrds = readdirSync(dir)
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => {
        const crd = parse(readFileSync(join(dir, f), 'utf8')) as {
          spec: { group: string; names: Omit<ServedResource, 'group'> };
        };
        const { kind, plural, singular, shortNames } = crd.spec.names;
        return { group: crd.spec.group, kind, plural, singular, shortNames };
      });
    const byKind = (a: ServedResource, b: ServedResource): number => a.kind.localeCompare(b.kind);
    expect([...STENCIL_RESOURCES].sort(byKind)).toEqual(fromCrds.sort(byKind));
  });

  function template(api: Partial<ApiSpec>): Template {
    return {
      apiVersion: 'stencil.dev/v1alpha1',
      kind: 'Template',
      metadata: { name: 'web-app', namespace: 'platform' },
      spec: { api: { ...API, ...api }, parameters: [], handlebars: 'kind: ConfigMap' },
    };
  }

  it('makes no CRD of a kind that would shadow it, with or without a cluster', () => {
    const crd = publishedCrd(template({ kind: 'TemplateInstance', shortNames: ['tpl'] }));
    expect(crd.ok).toBe(false);
    if (crd.ok) return;
    expect(crd.problems.map((p) => `${p.reason} ${p.path}`)).toEqual([
      'APIShadowsResource spec.api.kind',
      'APIShadowsResource spec.api.plural',
      'APIShadowsResource spec.api.shortNames[0]',
    ]);
    expect(apiProblems(template({ shortNames: ['tplrev'] }), undefined)).toMatchObject([
      { path: 'spec.api.shortNames[0]', reason: 'APIShadowsResource' },
    ]);
    // Kubernetes' own names are the cluster's to say: offline, only Stencil's are known.
    expect(apiProblems(template({ shortNames: ['po'] }), undefined)).toEqual([]);
  });
});
