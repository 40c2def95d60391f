// What holds a V8 heap snapshot (.heapsnapshot, as --heapsnapshot-signal writes it), for
// `npm run bench:idle -- --heap-snapshot DIR`: self size by kind of node, the module sources V8
// keeps (every loaded script's text stays in the heap as a string) and the compiled code of
// their functions, both by package, and the largest constructors. Self sizes only: no retained
// sizes, so nothing is counted twice.
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: {
    meta: {
      node_fields: string[];
      node_types: [string[], ...unknown[]];
      edge_fields: string[];
      edge_types: [string[], ...unknown[]];
    };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
}

const MiB = 1024 * 1024;

/** The package a script belongs to: node_modules/<name> (scoped too), Stencil's folder, node. */
export function packageOf(scriptName: string): string {
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(scriptName);
  if (modules) return modules[1]!;
  const stencil = /\/(?:dist|src)\/([^/]+)(\/[^/]+)?/.exec(scriptName);
  if (stencil) return `stencil ${stencil[1]}${stencil[2]?.includes('.') ? '' : (stencil[2] ?? '')}`;
  if (scriptName.startsWith('node:') || !scriptName.includes('/')) return 'node (built in)';
  return scriptName;
}

interface Tally {
  bytes: number;
  count: number;
}

function add(map: Map<string, Tally>, key: string, bytes: number): void {
  const tally = map.get(key) ?? { bytes: 0, count: 0 };
  tally.bytes += bytes;
  tally.count += 1;
  map.set(key, tally);
}

function table(title: string, map: Map<string, Tally>, rows: number, unit: string): string {
  const sorted = [...map].sort((a, b) => b[1].bytes - a[1].bytes);
  const sum = sorted.reduce((s, [, t]) => s + t.bytes, 0);
  const lines = sorted
    .slice(0, rows)
    .map(
      ([key, t]) =>
        `  ${(t.bytes / MiB).toFixed(2).padStart(7)} MiB  ${String(t.count).padStart(6)} ${unit}  ${key}`,
    );
  return `${title}: ${(sum / MiB).toFixed(1)} MiB\n${lines.join('\n')}`;
}

export function summarizeHeapSnapshot(file: string, rows = 12): string {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const { meta } = snap.snapshot;
  const nf = meta.node_fields.length;
  const ef = meta.edge_fields.length;
  const [TYPE, NAME, SIZE, EDGES] = ['type', 'name', 'self_size', 'edge_count'].map((f) =>
    meta.node_fields.indexOf(f),
  ) as [number, number, number, number];
  const [E_TYPE, E_NAME, E_TO] = ['type', 'name_or_index', 'to_node'].map((f) =>
    meta.edge_fields.indexOf(f),
  ) as [number, number, number];
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const { nodes, edges, strings } = snap;
  const count = nodes.length / nf;
  const firstEdge = new Uint32Array(count + 1);
  for (let i = 0, e = 0; i < count; i++) {
    firstEdge[i] = e;
    e += nodes[i * nf + EDGES]! * ef;
  }
  firstEdge[count] = edges.length;
  const type = (i: number): string => nodeTypes[nodes[i * nf + TYPE]!]!;
  const name = (i: number): string => strings[nodes[i * nf + NAME]!]!;
  const size = (i: number): number => nodes[i * nf + SIZE]!;
  /** Named edges of node i: [edge name, target]; element and hidden edges are numbered. */
  const named = function* (i: number): Generator<[string, number]> {
    for (let e = firstEdge[i]!; e < firstEdge[i + 1]!; e += ef) {
      const kind = edgeTypes[edges[e + E_TYPE]!]!;
      const label = kind === 'element' || kind === 'hidden' ? '' : strings[edges[e + E_NAME]!]!;
      yield [label, edges[e + E_TO]! / nf];
    }
  };

  const byType = new Map<string, Tally>();
  const byConstructor = new Map<string, Tally>();
  const sources = new Map<string, Tally>();
  const code = new Map<string, Tally>();
  const scriptPackage = new Map<number, string>();
  let total = 0;
  for (let i = 0; i < count; i++) {
    total += size(i);
    add(byType, type(i), size(i));
    if (type(i) === 'object' || type(i) === 'closure')
      add(byConstructor, `${type(i)} ${name(i)}`, size(i));
    if (type(i) !== 'code') continue;
    // A Script: a code node with a `source` edge to its text.
    for (const [label, to] of named(i)) {
      if (label !== 'source' || !type(to).includes('string')) continue;
      const pkg = packageOf(name(i));
      scriptPackage.set(i, pkg);
      add(sources, pkg, size(to));
    }
  }
  // A function's code: its SharedFunctionInfo, its bytecode (or uncompiled data) and what the
  // bytecode holds alone (constant pool, source positions), its scope info and feedback metadata.
  // Each node once: an outer scope info is shared by the functions inside it.
  const counted = new Uint8Array(count);
  const once = (i: number): number => (counted[i] ? 0 : ((counted[i] = 1), size(i)));
  for (let i = 0; i < count; i++) {
    if (type(i) !== 'code') continue;
    const script = [...named(i)].find(([label]) => label === 'script_or_debug_info')?.[1];
    const pkg = script === undefined ? undefined : scriptPackage.get(script);
    if (pkg === undefined) continue;
    let bytes = once(i);
    for (const [label, to] of named(i)) {
      if (label !== 'function_data' && !label.startsWith('raw_outer_scope_info')) continue;
      bytes += once(to);
      if (label !== 'function_data') continue;
      bytes += [...named(to)]
        .filter(([inner]) => inner === 'constant_pool' || inner === 'source_position_table')
        .reduce((sum, [, held]) => sum + once(held), 0);
    }
    add(code, pkg, bytes);
  }
  return [
    `Heap snapshot ${file}: ${(total / MiB).toFixed(1)} MiB (self sizes), ${count} nodes`,
    table('By kind of node', byType, rows, 'nodes'),
    table('Module source texts, by package', sources, rows, 'files'),
    table('Compiled functions (about), by package', code, rows, 'fns'),
    table('Objects and closures, by constructor', byConstructor, rows, 'objs'),
  ].join('\n');
}

// `tsx bench/heap-summary.ts FILE...` summarizes snapshots taken earlier.
if (import.meta.url === `file://${process.argv[1]}`)
  for (const file of process.argv.slice(2)) console.log(summarizeHeapSnapshot(file));
