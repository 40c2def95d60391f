// Stencil reads YAML as kubectl and the API server do (docs/adr/0036): the same scalars, documents
// and refusals, judged against sigs.k8s.io/yaml itself (tools/yaml-reference, built from Go
// modules), not against a list of what it is believed to do.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { beforeAll, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { KUBERNETES_YAML } from '../../src/engine/shared/kube-yaml.ts';
import { ensureYamlReference } from '../../tools/control-plane/binaries.ts';

interface Reading {
  json?: unknown;
  error?: string;
  strictError?: string;
}

let reference: string;

beforeAll(async () => {
  reference = await ensureYamlReference(() => undefined);
}, 600_000);

/** What sigs.k8s.io/yaml makes of each text. */
async function theirs(texts: string[]): Promise<Reading[]> {
  const child = promisify(execFile)(reference, [], { maxBuffer: 16 * 1024 * 1024 });
  child.child.stdin!.end(JSON.stringify(texts));
  return JSON.parse((await child).stdout) as Reading[];
}

/** What Stencil makes of it: refused, or its value as JSON would carry it. */
function ours(text: string, uniqueKeys: boolean): { value?: unknown; refused: boolean } {
  const docs = parseAllDocuments(text, { ...KUBERNETES_YAML, uniqueKeys });
  if (!Array.isArray(docs) || docs.some((d) => d.errors.length > 0)) return { refused: true };
  return { value: JSON.parse(JSON.stringify(docs[0]?.toJS() ?? null)) as unknown, refused: false };
}

/** Plain scalars of every type YAML 1.1 knows, and the look-alikes that are strings. */
const SCALARS = [
  // Timestamps and base-60 numbers: strings for sigs.k8s.io/yaml.
  '2026-01-15',
  '2026-01-15T10:00:00Z',
  '2026-1-5',
  '2026-01-15 10:00:00 +02:00',
  '12:30',
  '1:30:00',
  '190:20:30.15',
  '-12:30',
  // Booleans and nulls of YAML 1.1.
  'yes',
  'Yes',
  'YES',
  'no',
  'No',
  'NO',
  'on',
  'On',
  'ON',
  'off',
  'Off',
  'OFF',
  'y',
  'Y',
  'n',
  'N',
  'true',
  'True',
  'TRUE',
  'false',
  'False',
  'FALSE',
  'yEs',
  'tRUE',
  '~',
  'null',
  'Null',
  'NULL',
  'nULL',
  '',
  // Integers: decimal, octal, hex, binary, with signs and underscores.
  '0',
  '00',
  '07',
  '0777',
  '08',
  '09',
  '0o17',
  '0O17',
  '-0o17',
  '0x1F',
  '0X1f',
  '-0x1F',
  '0b101',
  '-0b101',
  '1_000',
  '1__2',
  '0x_1F',
  '+12',
  '-0',
  '+0',
  '9007199254740991',
  '12e3',
  // Floats.
  '1e3',
  '1E3',
  '1.5',
  '-.5',
  '.5',
  '1.',
  '-1.',
  '6.8523015e+5',
  '685.230_15e+03',
  '1.0e+3',
  '0.1',
  '1e-3',
  '.e3',
  '1.5.5',
  // Strings that look like something.
  '123abc',
  '0x',
  '0b',
  '0o',
  '0xG',
  '=',
  '<<',
  '-',
  '.',
  '..',
  'Infinity',
  'NaN',
  'nan',
  '0.0.1',
  'v1',
  '1:a',
  '1-2-3',
];

it('reads every scalar as sigs.k8s.io/yaml does', async () => {
  const texts = SCALARS.map((s) => `v: ${s}\n`);
  const readings = await theirs(texts);
  const differences = texts.flatMap((text, i) => {
    const mine = ours(text, false);
    const them = readings[i]!;
    const same =
      them.error !== undefined ? mine.refused : !mine.refused && equal(mine.value, them.json);
    return same ? [] : [{ scalar: SCALARS[i], ours: mine, theirs: them }];
  });
  expect(differences).toEqual([]);
}, 600_000);

it('refuses .inf and .nan, which no JSON can hold, as the API server does', async () => {
  const texts = ['v: .inf\n', 'v: -.Inf\n', 'v: .NaN\n', 'v: +.INF\n'];
  const readings = await theirs(texts);
  for (const [i, text] of texts.entries()) {
    expect(readings[i]!.error, text).toBeDefined();
    expect(ours(text, false).refused, text).toBe(true);
  }
}, 600_000);

it('reads documents as sigs.k8s.io/yaml does: merge keys, quoting, nesting, duplicates', async () => {
  const texts = [
    'base: &b {a: 1, b: 2}\nderived:\n  <<: *b\n  b: 3\n',
    'list: [a, "b", \'c\', 1, yes]\n',
    'nested: {x: [1, {y: 12:30}], z: 2026-01-15}\n',
    'block: |\n  line one\n  line two\n',
    'folded: >-\n  a\n  b\n',
    'quoted: "2026-01-15"\nsingle: \'12:30\'\n',
    'key with spaces: 1\n"quoted key": 2\n',
    'a: 1\na: 2\n',
    'a: {b: 1, b: 2}\n',
  ];
  const readings = await theirs(texts);
  for (const [i, text] of texts.entries()) {
    const them = readings[i]!;
    // What Stencil applies (render, the operator) is read like YAMLToJSON...
    const lenient = ours(text, false);
    expect(lenient.refused, text).toBe(them.error !== undefined);
    if (them.error === undefined) expect(equal(lenient.value, them.json), text).toBe(true);
    // ...and the files the CLI reads like the API server's strict decoding: no duplicate keys.
    // One difference, recorded in ADR 0036: go-yaml's strict decoder also refuses a key that
    // overrides one a merge key (<<) brought in; Stencil takes the override, as YAMLToJSON does.
    const overridesMerge = text.includes('<<');
    if (overridesMerge) expect(them.strictError, text).toContain('already set in map');
    else expect(ours(text, true).refused, text).toBe(them.strictError !== undefined);
  }
}, 600_000);

/** JSON equality, numbers by value (Go writes 1e3 as 1000, and so does JavaScript). */
function equal(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
