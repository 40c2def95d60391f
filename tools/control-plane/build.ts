// `npm run control-plane:build`: builds (or finds) the control plane's binaries ahead of a test
// run: kube-apiserver and etcd, and kube-controller-manager, kube-scheduler and kwok for planes
// with controllers (`--bare`: only the first two). Missing ones are built in parallel.
import { parseArgs } from 'node:util';
import { ensureBinaries } from './binaries.ts';

const { values } = parseArgs({ options: { bare: { type: 'boolean', default: false } } });
const binaries = await ensureBinaries(console.log, { controllers: !values.bare });
const paths = [binaries.kubeApiserver, binaries.etcd, ...Object.values(binaries.controllers ?? {})];
console.log(`control-plane binaries (${binaries.source}):\n  ${paths.join('\n  ')}`);
