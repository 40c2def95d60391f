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
  '\uE000',
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
