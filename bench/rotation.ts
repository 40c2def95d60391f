// `npm run bench:rotation`: latency from a Secret rotation to the rendered resource carrying the
// new value, over 50 sequential rotations of a Secret read by a revert instance. Measured from
// the client (rotation written → new value observed) and inside the operator (source event
// seen → apply done).
import { API_VERSION } from '../src/api/well-known.ts';
import { benchCluster, object, passwordTemplate, percentile, until } from './support.ts';

const ROTATIONS = 50;
const internal: number[] = [];
const cluster = await benchCluster({ onRotationLag: (ms) => internal.push(ms) });
const { user } = cluster;
const ns = 'rotation';
const secret = (value: string): ReturnType<typeof object> =>
  object({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'db', namespace: ns },
    stringData: { password: value },
  });
const value = async (): Promise<string | undefined> =>
  (
    (await user.get({ apiVersion: 'v1', kind: 'ConfigMap', name: 'app', namespace: ns })) as
      { data?: { password?: string } } | undefined
  )?.data?.password;

try {
  await user.apply(object({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }));
  await user.apply(secret('v0'));
  await user.apply(passwordTemplate(ns));
  await user.apply(
    object({
      apiVersion: API_VERSION,
      kind: 'TemplateInstance',
      metadata: { name: 'app', namespace: ns },
      spec: {
        templateRef: { name: 'app' },
        parameters: [
          { name: 'password', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } },
        ],
      },
    }),
  );
  await until(async () => (await value()) === 'v0');
  const latencies: number[] = [];
  for (let i = 1; i <= ROTATIONS; i++) {
    const started = performance.now();
    await user.apply(secret(`v${i}`));
    await until(async () => (await value()) === `v${i}`, 30_000);
    latencies.push(performance.now() - started);
  }
  const fmt = (n: number): string => `${n.toFixed(1)} ms`;
  console.log(`rotations: ${ROTATIONS}`);
  console.log(
    `rotation → value observed by a client: p50 ${fmt(percentile(latencies, 50))}, p99 ${fmt(percentile(latencies, 99))}, max ${fmt(Math.max(...latencies))}`,
  );
  console.log(
    `source event → apply done (operator): p50 ${fmt(percentile(internal, 50))}, p99 ${fmt(percentile(internal, 99))} (${internal.length} samples)`,
  );
} finally {
  await cluster.stop();
}
