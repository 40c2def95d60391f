// Templates written to make a Secret-backed parameter show up in a message (issue #17): each one
// fails, and the failure must never quote the Secret. Shared by the engine, CLI, property-based
// and operator tests, so every layer is tried with the same hostile input.
import type { ParameterDeclaration } from '../../src/api/template.ts';

export interface SecretLeakCase {
  name: string;
  body: string;
  /** The condition reason the instance fails with. */
  reason: string;
  /** Extra parameters besides `pw` (the Secret-backed one). */
  parameters?: ParameterDeclaration[];
  allowCrossNamespaceResources?: boolean;
  allowClusterScopedResources?: boolean;
  /** The Secret value this case is about, when it must have a particular shape. */
  secret?: string;
}

const configMap = (metadata: string, data = ''): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n${metadata}\n${data}`;

export const SECRET_LEAK_CASES: readonly SecretLeakCase[] = [
  {
    name: 'a namespace made of the Secret (cross-namespace refusal)',
    body: configMap('  name: x\n  namespace: {{parameters.pw}}'),
    reason: 'TemplateExecutionFailed',
  },
  {
    name: 'a Namespace named by the Secret (cluster-scoped refusal)',
    body: 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {{parameters.pw}}\n',
    reason: 'TemplateExecutionFailed',
  },
  {
    name: 'two documents with the same Secret-derived name (rendered twice)',
    body: `${configMap('  name: {{parameters.pw}}')}---\n${configMap('  name: {{parameters.pw}}')}`,
    reason: 'TemplateExecutionFailed',
  },
  {
    name: 'a Secret-derived name in another namespace',
    body: configMap('  name: app-{{parameters.pw}}\n  namespace: elsewhere'),
    reason: 'TemplateExecutionFailed',
  },
  {
    name: 'the Secret as the message of required (refused statically)',
    body: configMap('  name: x', 'data:\n  a: {{required parameters.pw parameters.empty}}\n'),
    parameters: [{ name: 'empty', type: 'string' }],
    reason: 'TemplateExecutionFailed',
  },
  {
    name: 'the render state through @stencil (refused statically)',
    body: configMap('  name: x', 'data:\n  a: {{toJson @stencil}}\n'),
    reason: 'TemplateExecutionFailed',
  },
  {
    name: 'the Secret as a key that replaces metadata.name',
    body: configMap('  name: x\n  {{parameters.pw}}: other-name'),
    reason: 'TemplateExecutionFailed',
    secret: 'name',
  },
  {
    name: 'the Secret as two label keys',
    body: configMap('  name: x\n  labels:\n    {{parameters.pw}}: a\n    {{parameters.pw}}: b'),
    reason: 'TemplateExecutionFailed',
  },
  {
    name: 'the Secret quoted into the middle of a flow map value, adding a key (ADR 0011)',
    body: configMap('  name: x', 'data:\n  a: {b: pre{{quote parameters.pw}}}\n'),
    reason: 'TemplateExecutionFailed',
    secret: 'SUPER, SECRET: x',
  },
  {
    name: 'the Secret as JSON at the end of a plain scalar, cut by a comment (ADR 0011)',
    body: configMap('  name: x', 'data:\n  a: pre {{toJson parameters.pw}}\n'),
    reason: 'TemplateExecutionFailed',
    secret: 'SUPER #SECRET',
  },
  {
    name: 'the Secret upper-cased into a namespace',
    body: configMap('  name: x\n  namespace: {{upper parameters.pw}}'),
    reason: 'TemplateExecutionFailed',
  },
  // Found by a hostile-author probe (2026-12-07): pieces of the value, each too short for the
  // redactor's word rule or read without a helper, glued into one scalar.
  {
    name: 'the Secret one character at a time, glued into a namespace',
    body: configMap(
      '  name: x\n  namespace: "x{{#each (split "" parameters.pw)}}{{this}}x{{/each}}"',
    ),
    reason: 'TemplateExecutionFailed',
  },
  {
    name: 'the Secret read backwards, a character at a time, by lookup',
    body: configMap(
      `  name: x\n  namespace: "n-${Array.from({ length: 11 }, (_, i) => `{{lookup parameters.pw ${10 - i}}}`).join('')}"`,
    ),
    reason: 'TemplateExecutionFailed',
  },
  {
    name: 'the Secret and its length read backwards by path, a character at a time',
    body: configMap(
      `  name: x\n  namespace: "n-{{parameters.pw.length}}-${Array.from({ length: 11 }, (_, i) => `{{parameters.pw.[${10 - i}]}}`).join('')}"`,
    ),
    reason: 'TemplateExecutionFailed',
  },
];

/** The Secret value the cases use unless a case needs its own. */
export const SECRET = 'SUPERSECRET';

/**
 * Whether `text` shows `secret` outside the placeholders that stand in for it. The text is cut
 * at each placeholder, so a secret made of the letters around one is not mistaken for a leak.
 */
export function shows(text: string, secret: string): boolean {
  // A secret also shows spread out (`xSxUxPx…`) or backwards; one under 8 characters would
  // match ordinary words that way, and one over 256 makes too large a pattern (it shows whole).
  const spread = (s: string): RegExp =>
    new RegExp([...s].map((c) => c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.{0,2}'));
  const forms =
    secret.length >= 8 && secret.length <= 256
      ? [spread(secret), spread([...secret].reverse().join(''))]
      : [];
  return text
    .split(/\[redacted: parameters\.\w+\]/)
    .some((part) => part.includes(secret) || forms.some((form) => form.test(part)));
}
