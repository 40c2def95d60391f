// Static check of the `observed` calls of a Template body, found when the Template is validated
// (its Valid condition and `stencil validate`) before any instance renders it: the producer must
// be a document of the same body, written with a literal apiVersion, kind and metadata.name, and
// in an earlier wave than the document that reads it. Like the ready-when check it reads the
// body's text, document by document; every render checks the same rule exactly (observed.ts).
import { parse } from 'yaml';
import { TemplateReason } from '../../api/condition.ts';
import { ANNOTATION_WAVE } from '../../api/well-known.ts';
import type { ObservedCall } from './observed.ts';
import type { Problem } from '../shared/problem.ts';
import { KUBERNETES_YAML } from '../shared/kube-yaml.ts';

/** What the text of one document says about itself; undefined where Handlebars decides it. */
interface DocumentText {
  firstLine: number;
  lastLine: number;
  apiVersion?: string;
  kind?: string;
  /** The name as written (for messages), and whether it is a literal. */
  nameText?: string;
  name?: string;
  /** The wave: 0 when absent, undefined when built with Handlebars. */
  wave?: number;
}

const SEPARATOR = /^---(\s|$)/;
const TOP_KEY = (key: string): RegExp => new RegExp(`^${key}:\\s*(.*)$`);
/** The annotation in block style (`key: "1"`) or inside a flow mapping (`{ key: "1", ... }`). */
const WAVE_ENTRY = new RegExp(
  `(["']?)${ANNOTATION_WAVE.replace(/[./]/g, '\\$&')}\\1\\s*:\\s*("[^"]*"|'[^']*'|[^,}\\s#]+)`,
);

/** The literal value of a YAML scalar written on one line, or undefined (Handlebars, not a scalar). */
function literal(raw: string | undefined): string | undefined {
  const text = raw?.trim();
  if (!text || text.includes('{{')) return undefined;
  try {
    const value: unknown = parse(text, KUBERNETES_YAML);
    return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
  } catch {
    return undefined;
  }
}

function nameOf(lines: string[]): string | undefined {
  const start = lines.findIndex((line) => /^metadata:/.test(line));
  if (start < 0) return undefined;
  const flow = /^metadata:\s*\{(.*)\}\s*$/.exec(lines[start]!);
  if (flow) return /(?:^|,)\s*name:\s*([^,}]+)/.exec(flow[1]!)?.[1];
  let indent: number | undefined;
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === '' || line.trim().startsWith('#')) continue;
    const width = line.length - line.trimStart().length;
    if (width === 0) return undefined;
    indent ??= width;
    const match = /^(\s+)name:\s*(.*)$/.exec(line);
    if (match && match[1]!.length === indent) return match[2];
  }
  return undefined;
}

function documentsOf(body: string): DocumentText[] {
  const lines = body.split('\n');
  const documents: DocumentText[] = [];
  let first = 0;
  const close = (last: number): void => {
    const own = lines.slice(first, last + 1);
    const find = (re: RegExp): string | undefined =>
      own.map((line) => re.exec(line)?.[1]).find((v) => v !== undefined);
    const waveRaw = own.map((line) => WAVE_ENTRY.exec(line)?.[2]).find((v) => v !== undefined);
    const waveText = waveRaw === undefined ? '0' : literal(waveRaw);
    const nameText = nameOf(own)?.trim();
    documents.push({
      firstLine: first + 1,
      lastLine: last + 1,
      apiVersion: literal(find(TOP_KEY('apiVersion'))),
      kind: literal(find(TOP_KEY('kind'))),
      nameText,
      name: literal(nameText),
      wave: waveText !== undefined && /^-?\d+$/.test(waveText) ? Number(waveText) : undefined,
    });
  };
  lines.forEach((line, i) => {
    if (SEPARATOR.test(line)) {
      if (i > first) close(i - 1);
      first = i + 1;
    }
  });
  if (first < lines.length) close(lines.length - 1);
  return documents;
}

function describe(document: DocumentText): string {
  return `${document.kind ?? 'the object'} "${document.name ?? document.nameText ?? '?'}"`;
}

function problem(call: ObservedCall, message: string): Problem {
  return {
    path: 'spec.handlebars',
    reason: TemplateReason.ValidationFailed,
    message: `line ${call.line}, column ${call.column}: ${message}`,
  };
}

/** Problems of the body's `observed` calls (from compileTemplate), with their lines. */
export function observedProblems(body: string, calls: readonly ObservedCall[]): Problem[] {
  if (calls.length === 0) return [];
  const documents = documentsOf(body);
  const problems: Problem[] = [];
  for (const call of calls) {
    const target = `${call.apiVersion} ${call.kind} "${call.name}"`;
    const reader = documents.find((d) => d.firstLine <= call.line && call.line <= d.lastLine);
    const producers = documents.filter(
      (d) => d.apiVersion === call.apiVersion && d.kind === call.kind && d.name === call.name,
    );
    if (producers.length === 0) {
      problems.push(
        problem(
          call,
          `observed reads ${target}, but no document of this Template renders it with that literal apiVersion, kind and metadata.name; observed reads only objects the same Template renders`,
        ),
      );
      continue;
    }
    if (!reader || reader.wave === undefined) continue; // a wave built with Handlebars: checked when rendered
    for (const producer of producers) {
      if (producer === reader) {
        problems.push(
          problem(
            call,
            `${describe(reader)} reads itself with observed; an object reads only objects of earlier waves`,
          ),
        );
        break;
      }
      if (producer.wave !== undefined && producer.wave >= reader.wave) {
        problems.push(
          problem(
            call,
            `${describe(reader)} (wave ${reader.wave}) reads ${describe(producer)} (wave ${producer.wave}, line ${producer.firstLine}) with observed: an object reads only objects of earlier waves; give ${describe(reader)} a ${ANNOTATION_WAVE} above ${producer.wave}`,
          ),
        );
        break;
      }
    }
  }
  return problems;
}
