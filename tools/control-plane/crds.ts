// Installs CRDs from YAML files with server-side apply (raw JSON, so no client serializer can
// drop `enum`, `default` or `x-kubernetes-*`), then waits until each is Established and served.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { send, type Endpoint } from './http.ts';

const PROJECT_CRDS = join(import.meta.dirname, '..', '..', 'config', 'crd');

/** Stencil's own CRDs (config/crd/*.yaml), as every plane the tests, bench and playground start. */
export async function installProjectCrds(endpoint: Endpoint): Promise<void> {
  const files = readdirSync(PROJECT_CRDS).filter((f) => f.endsWith('.yaml'));
  await installCrds(
    endpoint,
    files.map((f) => join(PROJECT_CRDS, f)),
  );
}

interface Crd {
  metadata: { name: string };
  spec: { group: string; names: { plural: string }; versions: { name: string; served: boolean }[] };
  status?: { conditions?: { type: string; status: string }[] };
}

export async function installCrds(
  endpoint: Endpoint,
  files: string[],
  timeoutMs = 30_000,
): Promise<void> {
  const crds = files.flatMap((file) =>
    parseAllDocuments(readFileSync(file, 'utf8'))
      .map((doc) => doc.toJS() as Crd | null)
      .filter((crd): crd is Crd => crd !== null),
  );
  for (const crd of crds) {
    const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}?fieldManager=stencil-harness&force=true`;
    const res = await send(endpoint, 'PATCH', path, crd, 'application/apply-patch+yaml');
    if (res.status >= 300)
      throw new Error(`applying CRD ${crd.metadata.name}: HTTP ${res.status}: ${res.body}`);
  }
  const deadline = Date.now() + timeoutMs;
  for (const crd of crds) {
    for (;;) {
      if (await isServed(endpoint, crd)) break;
      if (Date.now() > deadline)
        throw new Error(`CRD ${crd.metadata.name} not established within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

async function isServed(endpoint: Endpoint, crd: Crd): Promise<boolean> {
  const res = await send(
    endpoint,
    'GET',
    `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`,
  );
  const live = JSON.parse(res.body) as Crd;
  const established = live.status?.conditions?.some(
    (c) => c.type === 'Established' && c.status === 'True',
  );
  if (!established) return false;
  for (const version of crd.spec.versions.filter((v) => v.served)) {
    const discovery = await send(endpoint, 'GET', `/apis/${crd.spec.group}/${version.name}`);
    if (discovery.status !== 200) return false;
    const list = JSON.parse(discovery.body) as { resources?: { name: string }[] };
    if (!list.resources?.some((r) => r.name === crd.spec.names.plural)) return false;
  }
  return true;
}
