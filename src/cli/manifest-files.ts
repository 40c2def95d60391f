// Reads YAML/JSON manifest files for the CLI. Parsing follows YAML 1.1, as kubectl does (so an
// unquoted `off` is a boolean there too); unreadable or unparsable files are usage errors.
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../api/object-meta.ts';
import { UsageError } from '../command-line.ts';
import { KUBERNETES_YAML } from '../engine/shared/kube-yaml.ts';

export interface LoadedDocument {
  file: string;
  /** 1-based index of the document in its file. */
  index: number;
  value: unknown;
}

export function readDocuments(file: string): LoadedDocument[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(
      `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  const docs = parseAllDocuments(text, { ...KUBERNETES_YAML, uniqueKeys: true });
  if (!Array.isArray(docs)) throw new UsageError(`${file}: not a YAML stream`);
  const loaded: LoadedDocument[] = [];
  docs.forEach((doc, i) => {
    const error = doc.errors[0];
    if (error) {
      const line = error.linePos?.[0]?.line;
      throw new UsageError(
        `${file}: document ${i + 1}${line ? `, line ${line}` : ''}: ${error.message.split('\n')[0]}`,
      );
    }
    let value: unknown;
    try {
      // maxAliasCount refuses "billion laughs" alias bombs.
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (err) {
      throw new UsageError(`${file}: document ${i + 1}: ${(err as Error).message.split('\n')[0]}`);
    }
    if (value === null || value === undefined) return;
    const unusable = unusableValue(value);
    if (unusable) throw new UsageError(`${file}: document ${i + 1}: ${unusable}`);
    loaded.push({ file, index: i + 1, value });
  });
  return loaded;
}

/**
 * Why a loaded document is no JSON value Kubernetes could hold, or nothing: a self-referencing
 * alias (`&a {self: *a}`) makes a cycle, and `!!binary` a byte array (ADR 0017). Iterative, with
 * the path of open lists and maps, so a shared (non-circular) alias is fine.
 */
function unusableValue(root: unknown): string | undefined {
  const open = new Set<object>();
  const stack: { value: unknown; path: string; leaving?: boolean }[] = [{ value: root, path: '' }];
  while (stack.length > 0) {
    const { value, path, leaving } = stack.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (leaving) {
      open.delete(value);
      continue;
    }
    const at = path === '' ? 'the document' : path;
    if (value instanceof Uint8Array)
      return `${at} is a !!binary value; Kubernetes objects hold text: give base64 text instead`;
    if (open.has(value)) return `${at} is an alias of a value that contains it (a circular alias)`;
    open.add(value);
    stack.push({ value, path, leaving: true });
    const entries: [string, unknown][] = Array.isArray(value)
      ? value.map((v, i) => [`${path}[${i}]`, v])
      : Object.entries(value).map(([k, v]) => [path === '' ? k : `${path}.${k}`, v]);
    for (const [childPath, child] of entries) stack.push({ value: child, path: childPath });
  }
  return undefined;
}

export function kindOf(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const kind = (value as { kind?: unknown }).kind;
  return typeof kind === 'string' ? kind : undefined;
}

/** Reads a file that must hold exactly one object of `kind`. */
export function readSingle(file: string, kind: string): unknown {
  const docs = readDocuments(file).filter((d) => kindOf(d.value) === kind);
  if (docs.length !== 1) {
    throw new UsageError(`${file}: expected exactly one ${kind}, found ${docs.length}`);
  }
  return docs[0]!.value;
}

function shapeProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'is not a mapping';
  const object = value as { apiVersion?: unknown; kind?: unknown; metadata?: unknown };
  if (typeof object.apiVersion !== 'string' || object.apiVersion === '') return 'has no apiVersion';
  if (typeof object.kind !== 'string' || object.kind === '') return 'has no kind';
  const metadata = object.metadata as { name?: unknown; namespace?: unknown } | null | undefined;
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata))
    return 'has no metadata';
  if (typeof metadata.name !== 'string' || metadata.name === '') return 'has no metadata.name';
  if (metadata.namespace !== undefined && typeof metadata.namespace !== 'string')
    return 'has a metadata.namespace that is not a string';
  return undefined;
}

/**
 * Reads the Kubernetes objects of an `--objects` file: every document must be a mapping with
 * apiVersion, kind and metadata.name (a `List` is not unpacked).
 */
export function readObjects(file: string): KubeObject[] {
  return readDocuments(file).map((doc) => {
    const wrong = shapeProblem(doc.value);
    if (wrong)
      throw new UsageError(
        `${file}: document ${doc.index} ${wrong}: each object needs apiVersion, kind and metadata.name`,
      );
    return doc.value as KubeObject;
  });
}
