// Starts a control plane and keeps it running until SIGINT/SIGTERM. Prints one JSON line with
// the kubeconfig path and process ids once ready (the integration tests read it).
// Usage: node --import tsx tools/control-plane/serve.ts [--kubeconfig PATH] [--controllers]
import { parseArgs } from 'node:util';
import { startControlPlane } from './control-plane.ts';

const { values } = parseArgs({
  options: { kubeconfig: { type: 'string' }, controllers: { type: 'boolean', default: false } },
});
const plane = await startControlPlane({
  log: (line) => console.error(line),
  controllers: values.controllers,
  ...(values.kubeconfig ? { kubeconfigPath: values.kubeconfig } : {}),
});
console.log(
  JSON.stringify({
    kubeconfig: values.kubeconfig ?? plane.kubeconfigPath,
    server: plane.server,
    pids: plane.pids(),
  }),
);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void plane.stop().then(() => process.exit(0));
  });
}
