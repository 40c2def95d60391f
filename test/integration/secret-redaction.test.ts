// Issue #17 on the operator: hostile Templates that try to push a Secret-backed parameter into a
// message (placement refusals, duplicate keys, required, @-data, an API server rejection that
// quotes a name, Events that list applied names). Nothing the operator wrote, in status, Events
// or its logs, may show the Secret.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Condition } from '../../src/api/condition.ts';
import type { KubeObject } from '../../src/api/object-meta.ts';
import type { TemplateInstanceStatus } from '../../src/api/template-instance.ts';
import { API_VERSION } from '../../src/api/well-known.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import {
  SECRET,
  SECRET_LEAK_CASES,
  shows,
  type SecretLeakCase,
} from '../support/secret-leak-cases.ts';
import {
  binarySecret,
  CONFIG_MAP_BODY,
  configMap,
  fromConfigMap,
  fromSecret,
  instance,
  template,
} from './support/builders.ts';
import { connect, freshNamespace } from './support/cluster.ts';
import { conditionOf, instanceStatus } from './support/instances.ts';
import { eventually, startOperator, userClient, type RunningOperator } from './support/operator.ts';

let ns: string;
let user: KubeCluster;
let running: RunningOperator;

interface OperatorCase extends SecretLeakCase {
  ready?: boolean;
  /** How the instance reads the Secret `secret` (default: secretKeyRef of its key `pw`). */
  valueFrom?: (secret: string) => Record<string, unknown>;
}

const LARGE = (size: number): string =>
  `SUPERSECRET-${'0123456789abcdef'.repeat(Math.ceil(size / 16))}`.slice(0, size);

/** Beyond the engine's cases: failures and Events that only the API server and apply produce. */
const OPERATOR_CASES: readonly OperatorCase[] = [
  ...SECRET_LEAK_CASES,
  // Issue #22: what a helper made of the value, read through objectFieldRef, and large values.
  {
    name: 'b64dec of the Secret data read by objectFieldRef, as a namespace',
    body: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: {{b64dec parameters.pw}}\n',
    reason: 'TemplateExecutionFailed',
    secret: 'SUPERSECRET-7',
    valueFrom: (secret) => ({
      objectFieldRef: { apiVersion: 'v1', kind: 'Secret', name: secret, jsonPath: '.data.pw' },
    }),
  },
  {
    name: 'replace over the Secret, as a namespace',
    body: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: {{replace "-" "." parameters.pw}}\n',
    reason: 'TemplateExecutionFailed',
    secret: 'SUPERSECRET-9-x',
  },
  {
    name: 'a 40,000-character Secret used as a checksum',
    body: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: checksum\ndata:\n  checksum: {{sha256 parameters.pw}}\n',
    reason: 'Reconciled',
    ready: true,
    secret: LARGE(40_000),
  },
  {
    name: 'a 1,000,000-character Secret in a namespace',
    body: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: {{trunc 60 parameters.pw}}\ndata:\n  whole: {{quote parameters.pw}}\n',
    reason: 'TemplateExecutionFailed',
    secret: LARGE(1_000_000),
  },
  {
    name: 'a name the API server rejects and quotes (ApplyFailed)',
    body: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{parameters.pw}}\n',
    reason: 'ApplyFailed',
  },
  {
    name: 'a name listed in the Applied Event',
    body: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-{{lower parameters.pw}}\n',
    reason: 'Reconciled',
    ready: true,
  },
];

function objectsFor(leak: OperatorCase, i: number): KubeObject[] {
  const secret = leak.secret ?? SECRET;
  return [
    // `data`, not stringData: the value reaches the API server only base64-encoded.
    binarySecret(ns, `s${i}`, { pw: secret }),
    template(ns, `t${i}`, {
      sync: { mode: 'revert' },
      parameters: [{ name: 'pw', type: 'string' }, ...(leak.parameters ?? [])],
      handlebars: leak.body,
    }),
    instance(ns, `i${i}`, `t${i}`, [
      { name: 'pw', valueFrom: leak.valueFrom?.(`s${i}`) ?? fromSecret(`s${i}`, 'pw') },
    ]),
  ];
}

const statusOf = (name: string): Promise<TemplateInstanceStatus | undefined> =>
  instanceStatus(user, ns, name);
const ready = (status: TemplateInstanceStatus | undefined): Condition | undefined =>
  conditionOf(status);

beforeAll(async () => {
  ns = await freshNamespace(connect(), 'redaction');
  user = (await userClient()).cluster;
  running = await startOperator([ns]);
  for (const [i, leak] of OPERATOR_CASES.entries())
    for (const object of objectsFor(leak, i)) await user.apply(object);
});

afterAll(async () => {
  await running.stop();
});

describe('a runaway render on the operator', () => {
  it('fails that instance at the output limit while the operator keeps reconciling', async () => {
    const body =
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: |\n' +
      '{{#each parameters.l}}{{#each ../parameters.l}}{{indent 1 @root.parameters.big}}{{/each}}{{/each}}\n';
    await user.apply(configMap(ns, 'big', { big: 'x'.repeat(1_000_000) }));
    await user.apply(
      template(ns, 'runaway', {
        parameters: [
          { name: 'l', type: 'array' },
          { name: 'big', type: 'string' },
        ],
        handlebars: body,
      }),
    );
    await user.apply(
      instance(ns, 'runaway', 'runaway', [
        { name: 'l', value: Array.from({ length: 300 }, (_, i) => i) },
        { name: 'big', valueFrom: fromConfigMap('big', 'big') },
      ]),
    );
    const status = await eventually(async () => {
      const s = await statusOf('runaway');
      return ready(s)?.reason === 'TemplateExecutionFailed' && s;
    }, 'the runaway instance to fail');
    expect(ready(status)?.message).toContain(
      'rendered output exceeds the limit of 2097152 bytes (2 MiB)',
    );
    // Still serving everyone else: a new instance of another Template converges.
    await user.apply(template(ns, 'plain', { handlebars: CONFIG_MAP_BODY }));
    await user.apply(instance(ns, 'after-runaway', 'plain'));
    await eventually(
      async () => ready(await statusOf('after-runaway'))?.status === 'True',
      'after-runaway Ready',
    );
  });
});

describe('the operator never shows a Secret-backed value', () => {
  it('each hostile instance reaches its expected condition', async () => {
    for (const [i, leak] of OPERATOR_CASES.entries()) {
      const status = await eventually(async () => {
        const s = await statusOf(`i${i}`);
        return ready(s)?.reason === leak.reason && s;
      }, `instance i${i} (${leak.name}) Ready reason ${leak.reason}`);
      expect(ready(status)?.status).toBe(leak.ready ? 'True' : 'False');
      // Every condition message (the case whose Secret is "name" cannot be grepped globally).
      const secret = leak.secret ?? SECRET;
      for (const c of status.conditions ?? []) expect(shows(c.message, secret)).toBe(false);
    }
    // The ApplyFailed message is the API server's, with the name hidden.
    const rejected = ready(await statusOf(`i${OPERATOR_CASES.length - 2}`));
    expect(rejected?.message).toContain('[redacted: parameters.pw]');
  });

  it('shows it nowhere in status, Events or logs', async () => {
    const applied = OPERATOR_CASES.length - 1;
    const event = await eventually(async () => {
      const events = await user.list('v1', 'Event', { namespace: ns });
      return events.find(
        (e) =>
          (e as { reason?: string }).reason === 'Applied' &&
          (e as { involvedObject?: { name?: string } }).involvedObject?.name === `i${applied}`,
      );
    }, 'the Applied Event');
    expect((event as { message?: string }).message).toContain(
      'ConfigMap/app-[redacted: parameters.pw]',
    );
    const instances = await user.list(API_VERSION, 'TemplateInstance', { namespace: ns });
    // renderedResources names the objects themselves, which anyone who can list them sees
    // anyway (docs/adr/0007): everything else in status is checked.
    const statuses = instances.map((o) => {
      const status = { ...(o as { status?: TemplateInstanceStatus }).status };
      delete status.renderedResources;
      return status;
    });
    const events = await user.list('v1', 'Event', { namespace: ns });
    const seen = [JSON.stringify(statuses), JSON.stringify(events), running.logs.join('')];
    for (const text of seen) {
      expect(shows(text.toLowerCase(), SECRET.toLowerCase())).toBe(false);
      expect(text.length).toBeGreaterThan(0);
    }
    expect(running.logs.join('')).toContain('[redacted: parameters.pw]');
  });
});
