// `npm run control-plane:build`: builds (or finds) the control plane's binaries ahead of a test
// run: kube-apiserver and etcd, and kube-controller-manager, kube-scheduler and kwok for planes
// with controllers (`--bare`: only the first two). Missing ones are built in parallel. `--kro`
// also builds kro's controller (the benchmark's peer row).
import { parseArgs } from 'node:util';
import { ensureBinaries, ensureKro } from './binaries.ts';

const { values } = parseArgs({
  options: {
    bare: { type: 'boolean', default: false },
    kro: { type: 'boolean', default: false },
  },
});
const [binaries, kro] = await Promise.all([
  ensureBinaries(console.log, { controllers: !values.bare }),
  values.kro ? ensureKro(console.log) : undefined,
]);
const paths = [binaries.kubeApiserver, binaries.etcd, ...Object.values(binaries.controllers ?? {})];
if (kro) paths.push(kro);
console.log(`control-plane binaries (${binaries.source}):\n  ${paths.join('\n  ')}`);
