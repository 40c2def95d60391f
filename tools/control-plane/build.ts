// `npm run control-plane:build`: builds (or finds) kube-apiserver and etcd ahead of a test run.
import { ensureBinaries } from './binaries.ts';

const binaries = await ensureBinaries();
console.log(
  `control-plane binaries (${binaries.source}):\n  ${binaries.kubeApiserver}\n  ${binaries.etcd}`,
);
