// Strings built to confuse YAML and Handlebars, shared by the render properties so every
// placement of a value (plain, quoted, through a helper) is tried with the same hostile text.
import { fc } from '@fast-check/vitest';

/** Pieces of YAML and Handlebars syntax a value may carry. */
export const YAML_SIGNIFICANT = [
  ': ',
  '\n',
  '\r\n',
  '- ',
  '#',
  ' #',
  '{',
  '}',
  '[',
  ']',
  ',',
  '&a ',
  '*a',
  '!!js/function',
  '---',
  '...',
  '|',
  '>',
  "'",
  '"',
  '\\',
  '<<: *a',
  '\t',
  '\u0000',
  '\u0085',
  '\u2028',
  '{{',
  '}}',
  // The renderer's reserved characters: value markers, helper regions, observed attributions.
  '\uE000',
  '\uE002',
  '\uE004',
  '\uE005',
  '__proto__',
  'true',
  '~',
];

/** Strings built from YAML_SIGNIFICANT pieces, mixed with arbitrary unicode. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc
    .array(fc.oneof(fc.constantFrom(...YAML_SIGNIFICANT), fc.string({ maxLength: 6 })), {
      maxLength: 12,
    })
    .map((parts) => parts.join('')),
);

/** A data line of a ConfigMap template using a helper inside text, and what must come of it. */
export interface HelperTextCase {
  name: string;
  /** Lines under `data:` (indented by two), using `parameters.x`. */
  lines: string;
  x: unknown;
  /** The ConfigMap's data when the render is right to succeed. */
  data?: Record<string, unknown>;
  /** What the refusal names when the value would have changed the structure. */
  refused?: RegExp;
}

/**
 * Helpers that emit YAML (quote, squote, toJson, toYaml, indent/nindent of those) inside other
 * text (ADR 0011), each with a value that would change the structure (refused, naming the
 * helper and where) or a legitimate use that must keep rendering exactly. Shared by the engine
 * and `stencil render` tests. The template's line 6 is the first line under `data:`.
 */
export const HELPER_TEXT_CASES: readonly HelperTextCase[] = [
  {
    name: 'quote in the middle of a plain scalar, value with ": "',
    lines: '  k: pre-{{quote parameters.x}}-post',
    x: 'a: b',
    refused: /the output of quote \(template line 6, column 10\)/,
  },
  {
    name: 'toJson at the end of a plain scalar, value with " #"',
    lines: '  k: a {{toJson parameters.x}}',
    x: 'b # c',
    refused:
      /line 6, column 8 of the output\): the output of toJson \(template line 6, column 8\) changes the YAML structure/,
  },
  {
    name: 'quote in a flow map value, value with ","',
    lines: '  k: {a: pre{{quote parameters.x}}, z: 1}',
    x: ',-',
    refused: /the output of quote \(template line 6, column 13\)/,
  },
  {
    name: 'toJson in a flow list item, value with ","',
    lines: '  k: [a, pre{{toJson parameters.x}}]',
    x: 'b, c',
    refused: /the output of toJson \(template line 6, column 13\)/,
  },
  {
    name: 'toYaml of a map in a comment (its second line would be a top-level key)',
    lines: '  k: v # {{toYaml parameters.x}}',
    x: { a: 'x', hostNetwork: true },
    refused: /the output of toYaml \(template line 6, column 10\)/,
  },
  {
    name: 'toYaml of a map in a key',
    lines: '  pre-{{toYaml parameters.x}}: v',
    x: { a: 1, b: 2 },
    refused: /the output of toYaml \(template line 6, column 7\)/,
  },
  {
    name: 'toYaml of a map in a block scalar without indent (its second line leaves the scalar)',
    lines: '  k: |\n    {{toYaml parameters.x}}',
    x: { a: 1, b: 2 },
    refused: /the output of toYaml \(template line 7, column 5\)/,
  },
  {
    // Inside one scalar, yet it moves where the scalar ends: why "inside a scalar" is not enough.
    name: 'toYaml ending in a backslash inside double quotes (it escapes the closing quote)',
    lines: '  k: "pre {{toYaml parameters.x}}" # "',
    x: 'a\\',
    refused: /the output of toYaml \(template line 6, column 11\) changes the YAML structure/,
  },
  {
    // Every SafeString the renderer inserts is a region, not only a helper call's result.
    name: 'toJson reached through {{#with}} as {{this}} in a flow map value',
    lines: '{{#with (toJson parameters.x)}}\n  k: {a: pre{{this}} }\n{{/with}}',
    x: ',-',
    refused: /the output of this \(template line 7, column 13\) changes the YAML structure/,
  },
  {
    name: 'quote as the whole value',
    lines: '  k: {{quote parameters.x}}',
    x: 'a: b # c\nd: e',
    data: { k: 'a: b # c\nd: e' },
  },
  {
    name: 'toJson as a whole flow value',
    lines: '  k: {{toJson parameters.x}}',
    x: { a: [1, 'b: c'] },
    data: { k: { a: [1, 'b: c'] } },
  },
  {
    name: 'toJson as a whole item of a flow list',
    lines: '  k: [a, {{toJson parameters.x}}]',
    x: ['b, c'],
    data: { k: ['a', ['b, c']] },
  },
  {
    name: 'nindent of toYaml as the block under a key',
    lines: '  k:{{nindent 4 (toYaml parameters.x)}}',
    x: { a: { b: 'c: d' } },
    data: { k: { a: { b: 'c: d' } } },
  },
  {
    name: 'indent of toYaml among entries the template wrote',
    lines: '  k:\n{{indent 4 (toYaml parameters.x)}}\n    app: web',
    x: { tier: 'a: b' },
    data: { k: { tier: 'a: b', app: 'web' } },
  },
  {
    name: 'indent of toYaml among list items the template wrote',
    lines: '  k:\n    - --flag\n{{indent 4 (toYaml parameters.x)}}',
    x: ['--a=b: c', '- d'],
    data: { k: ['--flag', '--a=b: c', '- d'] },
  },
  {
    name: 'nindent of toYaml as the content of a block scalar',
    lines: '  k: |{{nindent 4 (toYaml parameters.x)}}',
    x: { a: 1, b: 'c # d' },
    data: { k: 'a: 1\nb: "c # d"\n' },
  },
  {
    name: 'quote in the middle of a plain scalar, harmless value',
    lines: '  k: pre-{{quote parameters.x}}-post',
    x: 'abc',
    data: { k: 'pre-"abc"-post' },
  },
  {
    name: 'quote in a comment, value with ": "',
    lines: '  k: v # {{quote parameters.x}}',
    x: 'a: b',
    data: { k: 'v' },
  },
  {
    name: 'a plain value inside double quotes',
    lines: '  k: "{{parameters.x}}"',
    x: '"\nextra: key',
    data: { k: '"\nextra: key' },
  },
  {
    name: 'sha256 in the middle of a plain scalar',
    lines: '  k: sum-{{sha256 parameters.x}}',
    x: 'a: b',
    data: { k: 'sum-75cd1899337ffbc9341398f7456f1027e2fc4b2658f9f0555a7a965cb309c6dd' },
  },
];
