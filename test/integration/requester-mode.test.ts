// Issue #22, requester mode on the real API server (ADR 0020): with --authorize-sources=requester
// the admission webhook records who creates each TemplateInstance, nobody may write or change that
// record by hand, and every valueFrom read is allowed only if that user may read the object
// themselves (a SubjectAccessReview on every pass, so a revoked grant stops the next render).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Condition } from '../../src/api/condition.ts';
import type { KubeObject } from '../../src/api/object-meta.ts';
import {
  ANNOTATION_RECONCILE_AT,
  ANNOTATION_REQUESTER,
  API_VERSION,
} from '../../src/api/well-known.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import { fromSecret, instance, secret, template } from './support/builders.ts';
import { connect, freshNamespace } from './support/cluster.ts';
import { conditionOf, instanceStatus } from './support/instances.ts';
import {
  eventually,
  loopbackWebhook,
  rejectionOf,
  removeWebhookConfiguration,
  startOperator,
  userClient,
  type RunningOperator,
} from './support/operator.ts';

const GRANTED = 'GRANTED-VALUE-5b0e';
const WITHHELD = 'WITHHELD-VALUE-c41a';
const STRICT_CONFIGURATION = 'stencil-strict-requester-test';
const REQUESTER_CONFIGURATION = 'stencil-requester-test';
const TYPED_GROUP = `req-${randomBytes(3).toString('hex')}.example.com`;

let ns: string;
/** `tester`, in system:masters: may read every Secret. */
let tester: KubeCluster;
/** `ordinary`, in no group: only the Role below gives it rights. */
let ordinary: KubeCluster;
let running: RunningOperator;

const role = (secrets: string[]): KubeObject => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'Role',
  metadata: { name: 'instance-author', namespace: ns },
  rules: [
    {
      apiGroups: ['stencil.dev'],
      resources: ['templateinstances'],
      verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
    },
    { apiGroups: [''], resources: ['secrets'], resourceNames: secrets, verbs: ['get'] },
    { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] },
  ],
});

/** The parameters of an instance of `echo`: its one parameter read from `valueFrom`. */
const echoing = (valueFrom: Record<string, unknown>): unknown[] => [
  { name: 'v', valueFrom, defaultValue: 'the default' },
];

async function ready(name: string, reason: string, as = tester): Promise<Condition> {
  let seen: Condition | undefined;
  try {
    return await eventually(async () => {
      seen = conditionOf(await instanceStatus(as, ns, name));
      return seen?.reason === reason && seen;
    }, `instance ${name} Ready reason ${reason}`);
  } catch (error) {
    throw new Error(`${(error as Error).message}; Ready was ${JSON.stringify(seen)}`);
  }
}

async function output(name: string): Promise<KubeObject | undefined> {
  return tester.get({ apiVersion: 'v1', kind: 'ConfigMap', name: `${name}-out`, namespace: ns });
}

async function recorded(name: string): Promise<string | undefined> {
  const live = await tester.get({
    apiVersion: API_VERSION,
    kind: 'TemplateInstance',
    name,
    namespace: ns,
  });
  return live?.metadata.annotations?.[ANNOTATION_REQUESTER];
}

/** Sets ordinary's Secret grants and waits until the API server's authorizer has them. */
async function grant(secrets: string[]): Promise<void> {
  await tester.apply(role(secrets));
  const user = { username: 'ordinary', groups: ['system:authenticated'] };
  const access = { verb: 'get', apiVersion: 'v1', kind: 'Secret', namespace: ns } as const;
  await eventually(
    async () => {
      const granted = await tester.reviewAccess(user, { ...access, name: 'withheld' });
      return granted.allowed === secrets.includes('withheld');
    },
    `RBAC to grant ${secrets.join(', ')}`,
  );
}

/** Makes the operator look again (RBAC changes bring no event). */
async function touch(name: string): Promise<void> {
  const live = await tester.get({
    apiVersion: API_VERSION,
    kind: 'TemplateInstance',
    name,
    namespace: ns,
  });
  await tester.apply({
    apiVersion: API_VERSION,
    kind: 'TemplateInstance',
    metadata: {
      name,
      namespace: ns,
      annotations: { [ANNOTATION_RECONCILE_AT]: String(Date.now()) },
    },
    spec: live?.spec,
  });
}

beforeAll(async () => {
  ns = await freshNamespace(connect(), 'requester');
  tester = (await userClient()).cluster;
  ordinary = (await userClient(inject('ordinaryKubeconfig'))).cluster;
  await tester.apply(role(['granted']));
  await tester.apply({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'instance-author', namespace: ns },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'instance-author' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'ordinary' }],
  });
  for (const [name, value] of Object.entries({ granted: GRANTED, withheld: WITHHELD }))
    await tester.apply(secret(ns, name, { value }));
  await tester.apply(
    template(ns, 'echo', {
      // Not off: an off instance freezes after its first apply and never reads again.
      sync: { mode: 'revert' },
      parameters: [{ name: 'v', type: 'string' }],
      handlebars:
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{instance.name}}-out\ndata:\n  v: {{quote parameters.v}}\n',
    }),
  );
  // A kind of its own (ADR 0032): its objects' creators are recorded too.
  await tester.apply(
    template(ns, 'echo-typed', {
      api: { group: TYPED_GROUP, version: 'v1', kind: 'Echo' },
      sync: { mode: 'revert' },
      parameters: [{ name: 'v', type: 'string' }],
      handlebars:
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{instance.name}}-out\ndata:\n  v: {{quote parameters.v}}\n',
    }),
  );
  await tester.apply({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'echo-author', namespace: ns },
    roleRef: {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: `stencil:api:echos.${TYPED_GROUP}:edit`,
    },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'ordinary' }],
  });
  // Created before requester mode is on: nobody recorded.
  await tester.apply(instance(ns, 'legacy', 'echo', echoing(fromSecret('granted', 'value'))));
  running = await startOperator([ns], undefined, {
    webhook: loopbackWebhook(ns, STRICT_CONFIGURATION, {
      requester: true,
      requesterConfigurationName: REQUESTER_CONFIGURATION,
      typedGroups: [TYPED_GROUP],
    }),
    authorizeSources: 'requester',
    apiGroups: new Map([[ns, new Set([TYPED_GROUP])]]),
  });
}, 60_000);

afterAll(async () => {
  // Before the webhook server stops, so no later create calls a dead endpoint.
  await tester.delete({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    name: REQUESTER_CONFIGURATION,
  });
  await removeWebhookConfiguration(tester, STRICT_CONFIGURATION);
  await running.stop();
});

describe('requester mode (--authorize-sources=requester)', () => {
  it('records the creator, and reads what that user may read', async () => {
    await ordinary.apply(instance(ns, 'mine', 'echo', echoing(fromSecret('granted', 'value'))));
    const record = JSON.parse((await recorded('mine')) ?? '{}') as Record<string, unknown>;
    expect(record).toEqual({
      username: 'ordinary',
      uid: 'ordinary-uid',
      groups: ['system:authenticated'],
    });
    await ready('mine', 'Reconciled', ordinary);
    expect((await output('mine'))?.data).toEqual({ v: GRANTED });
  });

  it('refuses a read the creator may not make, with no default standing in', async () => {
    await ordinary.apply(instance(ns, 'theirs', 'echo', echoing(fromSecret('withheld', 'value'))));
    const condition = await ready('theirs', 'SourceNotAuthorized', ordinary);
    expect(condition.message).toContain(
      `user "ordinary", who created the instance, may not get Secret ${ns}/withheld`,
    );
    expect(await output('theirs')).toBeUndefined();
    // The same read for someone who may make it.
    await tester.apply(instance(ns, 'for-admin', 'echo', echoing(fromSecret('withheld', 'value'))));
    await ready('for-admin', 'Reconciled');
    expect((await output('for-admin'))?.data).toEqual({ v: WITHHELD });
  });

  it('records the creator of a typed instance too, and reads what that user may read', async () => {
    const echo = (name: string, secretName: string): KubeObject => ({
      apiVersion: `${TYPED_GROUP}/v1`,
      kind: 'Echo',
      metadata: { name, namespace: ns },
      spec: {
        valueFrom: {
          v: { secretKeyRef: { name: secretName, key: 'value' }, defaultValue: 'the default' },
        },
      },
    });
    const echoStatus = async (name: string): Promise<{ conditions?: Condition[] } | undefined> =>
      (
        (await tester.get({
          apiVersion: `${TYPED_GROUP}/v1`,
          kind: 'Echo',
          name,
          namespace: ns,
        })) as { status?: { conditions?: Condition[] } } | undefined
      )?.status;
    // Once the kind is served and its edit role exists.
    await eventually(
      async () => ordinary.apply(echo('typed-mine', 'granted')).then(() => true),
      'ordinary creates an Echo',
    );
    const live = await tester.get({
      apiVersion: `${TYPED_GROUP}/v1`,
      kind: 'Echo',
      name: 'typed-mine',
      namespace: ns,
    });
    expect(JSON.parse(live?.metadata.annotations?.[ANNOTATION_REQUESTER] ?? '{}')).toMatchObject({
      username: 'ordinary',
    });
    await eventually(
      async () => conditionOf(await echoStatus('typed-mine'))?.reason === 'Reconciled',
      'typed-mine Ready',
    );
    expect((await output('typed-mine'))?.data).toEqual({ v: GRANTED });
    await ordinary.apply(echo('typed-theirs', 'withheld'));
    await eventually(
      async () => conditionOf(await echoStatus('typed-theirs'))?.reason === 'SourceNotAuthorized',
      'typed-theirs refused',
    );
    expect(await output('typed-theirs')).toBeUndefined();
  });

  it('asks for list rights for a LIST read', async () => {
    await ordinary.apply(
      instance(
        ns,
        'listing',
        'echo',
        echoing({
          objectFieldRef: {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            namespace: ns,
            jsonPath: '.items[0].metadata.name',
          },
        }),
      ),
    );
    const condition = await ready('listing', 'SourceNotAuthorized', ordinary);
    expect(condition.message).toContain(`may not list ConfigMap objects in namespace "${ns}"`);
  });

  it('refuses a requester written by hand, and keeps the record through a re-apply', async () => {
    const forged = JSON.stringify({ username: 'tester', groups: ['system:masters'] });
    expect(
      await rejectionOf(
        ordinary.apply(
          instance(ns, 'forged', 'echo', echoing(fromSecret('withheld', 'value')), {
            annotations: { [ANNOTATION_REQUESTER]: forged },
          }),
        ),
      ),
    ).toContain('metadata.annotations["stencil.dev/requester"] is written by');
    expect(
      await rejectionOf(
        ordinary.apply(
          instance(ns, 'theirs', 'echo', echoing(fromSecret('withheld', 'value')), {
            annotations: { [ANNOTATION_REQUESTER]: forged },
          }),
        ),
      ),
    ).toContain('may not be changed');
    // A re-apply of the manifest, which never had the annotation, keeps the record.
    const before = await recorded('mine');
    await ordinary.apply(
      instance(ns, 'mine', 'echo', echoing(fromSecret('granted', 'value')), {
        annotations: { note: 're-applied' },
      }),
    );
    expect(await recorded('mine')).toBe(before);
  });

  it('checks again on every pass: a grant lets the read through, its revocation stops it', async () => {
    await grant(['granted', 'withheld']);
    await touch('theirs');
    await ready('theirs', 'Reconciled', ordinary);
    const applied = await output('theirs');
    expect(applied?.data).toEqual({ v: WITHHELD });

    await grant(['granted']);
    await touch('theirs');
    await ready('theirs', 'SourceNotAuthorized', ordinary);
    // Nothing applied earlier changed.
    expect((await output('theirs'))?.metadata.resourceVersion).toBe(
      applied?.metadata.resourceVersion,
    );
  });

  it('refuses every read of an instance nobody was recorded for', async () => {
    expect(await recorded('legacy')).toBeUndefined();
    const condition = await ready('legacy', 'SourceNotAuthorized');
    expect(condition.message).toContain('the instance records no requester');
    expect(await output('legacy')).toBeUndefined();
  });

  it('never puts a value into status, Events or logs', async () => {
    const events = await tester.list('v1', 'Event', { namespace: ns });
    const statuses = await tester.list(API_VERSION, 'TemplateInstance', { namespace: ns });
    const seen = JSON.stringify([
      events,
      statuses.map((s) => (s as { status?: unknown }).status),
      running.logs,
    ]);
    expect(seen).not.toContain(GRANTED);
    expect(seen).not.toContain(WITHHELD);
  });
});
