// Who the requests a Template causes are made as, as a port (ADR 0035): the ServiceAccount it
// acts as, by impersonation; else the one an instance recorded (its Template is gone, or names
// none any more); else, and in single-team mode, the operator itself.
import type { Template } from '../../api/template.ts';
import {
  actingIdentity,
  parseServiceAccount,
  serviceAccountUsername,
  type ServiceAccountRef,
  type TenancyPolicy,
} from '../../engine/shared/acting-identity.ts';
import type { ClusterPort, Impersonation } from '../cluster-port.ts';
import type { Acting } from './evaluate-on-cluster.ts';

export interface ActingDeps {
  tenancy?: TenancyPolicy;
  /**
   * How a request is made as a ServiceAccount: its username, and the extra that marks it as the
   * operator's. Needed whenever `tenancy` acts as ServiceAccounts.
   */
  impersonation?: (account: ServiceAccountRef) => Promise<Impersonation>;
}

/** `cluster`, acting for `template` (or as `recorded`, `namespace/name`, when it cannot). */
export async function actingFor(
  cluster: ClusterPort,
  deps: ActingDeps,
  template: Template | undefined,
  recorded?: string,
): Promise<Acting> {
  const account = accountOf(deps.tenancy, template, recorded);
  if (!account || !deps.impersonation) return { port: cluster };
  return {
    port: cluster.actingAs(await deps.impersonation(account)),
    user: {
      username: serviceAccountUsername(account),
      groups: [
        'system:serviceaccounts',
        `system:serviceaccounts:${account.namespace}`,
        'system:authenticated',
      ],
    },
  };
}

function accountOf(
  tenancy: TenancyPolicy | undefined,
  template: Template | undefined,
  recorded: string | undefined,
): ServiceAccountRef | undefined {
  if (!tenancy || tenancy.actAs === 'operator') return undefined;
  const identity = template && actingIdentity(template, tenancy);
  if (identity?.ok) return identity.serviceAccount;
  return parseServiceAccount(recorded);
}
