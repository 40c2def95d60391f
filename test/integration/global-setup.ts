// Starts one real control plane for the whole integration run, installs the Stencil CRDs, and
// hands the kubeconfig to the test files (inject('kubeconfig')).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startControlPlane, type ControlPlane } from '../../tools/control-plane/control-plane.ts';
import { installCrds } from '../../tools/control-plane/crds.ts';

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
  plane = await startControlPlane({ log: (line) => console.log(`[control-plane] ${line}`) });
  const crdDir = join(import.meta.dirname, '..', '..', 'config', 'crd');
  await installCrds(
    plane,
    readdirSync(crdDir)
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => join(crdDir, f)),
  );
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
