// The ClusterRoles Stencil keeps for each published kind (ADR 0032), so app teams are granted
// "may create WebApps" the Kubernetes way. With aggregateToDefaultRoles they join the standard
// edit/admin and view roles; otherwise the platform team binds them like any role. Pure.
import type { Template } from '../../api/template.ts';
import {
  ANNOTATION_PUBLISHED_BY,
  LABEL_MANAGED_BY,
  MANAGED_BY_STENCIL,
} from '../../api/well-known.ts';
import { apiNames, publisherOf, type PublishedObjectMeta } from './api-names.ts';

export interface ClusterRole {
  apiVersion: 'rbac.authorization.k8s.io/v1';
  kind: 'ClusterRole';
  metadata: PublishedObjectMeta;
  rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
}

const AGGREGATE = 'rbac.authorization.k8s.io/aggregate-to-';
const READ = ['get', 'list', 'watch'];

/** `stencil:api:<plural>.<group>:<role>`. */
export function roleName(crdName: string, role: 'edit' | 'view'): string {
  return `stencil:api:${crdName}:${role}`;
}

/** The edit and view roles of the Template's kind (none without `spec.api`). */
export function publishedRoles(template: Template): ClusterRole[] {
  const api = template.spec.api;
  if (!api) return [];
  const names = apiNames(api);
  const role = (
    which: 'edit' | 'view',
    aggregateTo: string[],
    rules: ClusterRole['rules'],
  ): ClusterRole => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: {
      name: roleName(names.crdName, which),
      labels: {
        [LABEL_MANAGED_BY]: MANAGED_BY_STENCIL,
        ...(api.aggregateToDefaultRoles
          ? Object.fromEntries(aggregateTo.map((to) => [`${AGGREGATE}${to}`, 'true']))
          : {}),
      },
      annotations: { [ANNOTATION_PUBLISHED_BY]: publisherOf(template) },
    },
    rules,
  });
  return [
    role(
      'edit',
      ['edit', 'admin'],
      [
        {
          apiGroups: [names.group],
          resources: [names.plural],
          verbs: [...READ, 'create', 'update', 'patch', 'delete', 'deletecollection'],
        },
        { apiGroups: [names.group], resources: [`${names.plural}/status`], verbs: READ },
      ],
    ),
    role(
      'view',
      ['view'],
      [
        {
          apiGroups: [names.group],
          resources: [names.plural, `${names.plural}/status`],
          verbs: READ,
        },
      ],
    ),
  ];
}
