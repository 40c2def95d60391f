// `npm run bench:requester`: what requester mode (ADR 0020) costs. For each mode, a fresh control
// plane and an in-process operator converge INSTANCES revert instances that each read one
// Secret; requester mode adds one SubjectAccessReview per read per pass. Also the latency of a
// single SubjectAccessReview, asked REVIEWS times in a row.
import { API_VERSION } from '../src/api/well-known.ts';
import type { AuthorizeSources } from '../src/reconcile/instance/requester-authorization.ts';
import { benchCluster, object, passwordTemplate, percentile, until } from './support.ts';

const INSTANCES = 300;
const REVIEWS = 500;
const ns = 'requester';

async function converge(mode: AuthorizeSources): Promise<void> {
  const cluster = await benchCluster({
    authorizeSources: mode,
    webhook: {
      endpoint: { url: 'https://127.0.0.1:0/validate-strict' },
      port: 0,
      host: '127.0.0.1',
      namespace: 'default',
      requester: mode === 'requester',
    },
  });
  const { user, admin } = cluster;
  try {
    await user.apply(object({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }));
    await user.apply(
      object({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'db', namespace: ns },
        stringData: { password: 'bench-value' },
      }),
    );
    await user.apply(passwordTemplate(ns));
    // The requester webhook is in place before the first instance, so each records `tester`.
    await until(async () =>
      mode === 'operator'
        ? true
        : Boolean(
            await admin.get({
              apiVersion: 'admissionregistration.k8s.io/v1',
              kind: 'MutatingWebhookConfiguration',
              name: 'stencil-requester',
            }),
          ),
    );
    const started = performance.now();
    for (let i = 0; i < INSTANCES; i++)
      await user.apply(
        object({
          apiVersion: API_VERSION,
          kind: 'TemplateInstance',
          metadata: { name: `app-${i}`, namespace: ns },
          spec: {
            templateRef: { name: 'app' },
            parameters: [
              { name: 'password', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } },
            ],
          },
        }),
      );
    const created = performance.now();
    await until(async () => {
      const items = await user.list(API_VERSION, 'TemplateInstance', { namespace: ns });
      return (
        items.filter((i) => (i as { status?: { phase?: string } }).status?.phase === 'Ready')
          .length === INSTANCES
      );
    }, 600_000);
    const ready = performance.now();
    console.log(
      `${mode.padEnd(9)}: ${INSTANCES} instances created in ${((created - started) / 1000).toFixed(1)} s, all Ready ${((ready - started) / 1000).toFixed(1)} s after the first create`,
    );
    if (mode === 'requester') {
      const times: number[] = [];
      const requester = { username: 'tester', groups: ['system:masters', 'system:authenticated'] };
      const access = {
        verb: 'get',
        apiVersion: 'v1',
        kind: 'Secret',
        namespace: ns,
        name: 'db',
      } as const;
      for (let i = 0; i < REVIEWS; i++) {
        const t = performance.now();
        await admin.reviewAccess(requester, access);
        times.push(performance.now() - t);
      }
      console.log(
        `SubjectAccessReview: p50 ${percentile(times, 50).toFixed(2)} ms, p99 ${percentile(times, 99).toFixed(2)} ms over ${REVIEWS} in a row`,
      );
    }
  } finally {
    await cluster.stop();
  }
}

await converge('operator');
await converge('requester');
