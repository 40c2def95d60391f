// Starts one real control plane for the whole integration run, installs the Stencil CRDs, and
// hands the kubeconfig to the test files (inject('kubeconfig')).
import type { TestProject } from 'vitest/node';
import { ensureBinaries } from '../../tools/control-plane/binaries.ts';
import { startControlPlane, type ControlPlane } from '../../tools/control-plane/control-plane.ts';
import { installProjectCrds } from '../../tools/control-plane/crds.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    kubeconfig: string;
    userKubeconfig: string;
    /** `ordinary`: in no group, so only RBAC bindings give it rights. */
    ordinaryKubeconfig: string;
    kubeServer: string;
  }
}

let plane: ControlPlane | undefined;

export async function setup(project: TestProject): Promise<void> {
  const log = (line: string): void => console.log(`[control-plane] ${line}`);
  // The shared plane is bare, but files that start a plane with controllers need their binaries:
  // build whatever is missing here, all at once and with progress shown, not inside a test hook.
  await ensureBinaries(log, { controllers: true });
  plane = await startControlPlane({ log });
  await installProjectCrds(plane);
  project.provide('kubeconfig', plane.kubeconfigPath);
  project.provide('userKubeconfig', plane.userKubeconfigPath);
  project.provide('ordinaryKubeconfig', plane.ordinaryKubeconfigPath);
  project.provide('kubeServer', plane.server);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void teardown().finally(() => process.exit(130)));
  }
}

export async function teardown(): Promise<void> {
  const current = plane;
  plane = undefined;
  await current?.stop();
}
