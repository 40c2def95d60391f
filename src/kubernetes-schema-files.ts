// The reader of the built-in kinds' schema bundle (schemas/kubernetes, ADR 0029) that the engine's
// KubernetesSchemas is given: the engine does no I/O, so the process reads the files for it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SchemaFileReader } from './engine/object-schema/kubernetes-schemas.ts';

/**
 * The bundle's directory: `schemas/kubernetes` beside the folder of this module, which is src/
 * under tsx, dist/ after tsc and the CLI bundle's dist/ alike (esbuild's CommonJS output has
 * `__dirname`, not `import.meta`).
 */
export function defaultSchemaDirectory(): string {
  const here = typeof __dirname === 'string' ? __dirname : import.meta.dirname;
  return join(here, '..', 'schemas', 'kubernetes');
}

/** Reads `file` of the bundle in `directory` (a bundle file name never holds a separator). */
export function schemaFileReader(directory = defaultSchemaDirectory()): SchemaFileReader {
  return (file) => {
    if (!/^[\w.-]+\.json$/.test(file)) throw new Error(`not a schema bundle file: ${file}`);
    return readFileSync(join(directory, file), 'utf8');
  };
}
