// The schemas the CLI checks rendered objects against (issue #26, ADR 0029): the built-in kinds
// of Kubernetes 1.36 from the bundle beside the CLI, Stencil's own kinds, and the CRDs of
// `--crds` files (a Template's own CRDs are added per render).
import type { Flag } from '../command-line.ts';
import { UsageError } from '../command-line.ts';
import { KubernetesSchemas } from '../engine/object-schema/kubernetes-schemas.ts';
import { OfflineSchemas } from '../engine/object-schema/object-schema.ts';
import { schemaFileReader } from '../kubernetes-schema-files.ts';
import { readObjects } from './manifest-files.ts';

export const CRDS_FLAG: Flag = {
  type: 'string',
  multiple: true,
  value: 'CRDS.yaml',
  description:
    'CustomResourceDefinitions to check custom resources against (the built-in kinds of Kubernetes 1.36 are known)',
};

/** One per process: what it loads stays loaded. */
let builtIns: KubernetesSchemas | undefined;

/** The offline schemas plus the CRDs of `files`; a file without a CRD is a usage error. */
export function offlineSchemas(files: readonly string[]): OfflineSchemas {
  builtIns ??= new KubernetesSchemas(schemaFileReader());
  const crds = files.flatMap((file) => {
    const found = readObjects(file).filter((o) => o.kind === 'CustomResourceDefinition');
    if (found.length === 0)
      throw new UsageError(`--crds ${file}: no CustomResourceDefinition in it`);
    return found;
  });
  return new OfflineSchemas(builtIns, crds);
}
