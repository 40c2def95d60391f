// Unit tests of the template helpers: exact results through real Handlebars calls, argument
// checks, the SafeString contract, and hostile values that must round-trip through YAML.
import { createHash } from 'node:crypto';
import Handlebars from 'handlebars';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  HELPER_NAMES,
  HELPER_SIGNATURES,
  MAX_HELPER_TEXT_LENGTH,
  RenderHelperError,
  registerHelpers,
  type HelperName,
} from './helpers.ts';

const hb = Handlebars.create();
registerHelpers(hb);
let captured: unknown;
hb.registerHelper('capture', (value: unknown) => {
  captured = value;
  return '';
});
const knownHelpers = Object.fromEntries([...HELPER_NAMES, 'capture'].map((name) => [name, true]));

/** Renders like the renderer compiles: noEscape, only known helpers. */
function render(template: string, context: object = {}): string {
  return hb.compile(template, { noEscape: true, knownHelpersOnly: true, knownHelpers })(context);
}

/** Evaluates a Handlebars (sub)expression and returns its result untouched. */
function evaluate(expression: string, context: object = {}): unknown {
  captured = undefined;
  render(`{{capture ${expression}}}`, context);
  return captured;
}

/** Calls a helper through Handlebars with arbitrary argument values (SafeStrings included). */
function call(name: string, ...args: unknown[]): unknown {
  const context = Object.fromEntries(args.map((arg, i) => [`a${i}`, arg]));
  return evaluate(`(${name}${args.map((_, i) => ` a${i}`).join('')})`, context);
}

/** Parses like the renderer (YAML 1.1) and like a YAML 1.2 reader; both must agree. */
function parseYaml(text: string): unknown {
  const modern: unknown = parse(text);
  expect(parse(text, { version: '1.1' })).toEqual(modern);
  return modern;
}

function failure(run: () => unknown): RenderHelperError {
  try {
    run();
  } catch (error) {
    if (error instanceof RenderHelperError) return error;
    throw error;
  }
  throw new Error('expected a RenderHelperError');
}

function safe(text: string): Handlebars.SafeString {
  return new hb.SafeString(text);
}

/** The text of a result that must be a SafeString. */
function yamlOf(result: unknown): string {
  expect(result).toBeInstanceOf(hb.SafeString);
  return String(result);
}

function nindent(spaces: number, yaml: string): string {
  return yamlOf(call('nindent', spaces, safe(yaml)));
}

const EMPTY: [string, unknown][] = [
  ['undefined', undefined],
  ['null', null],
  ['the empty string', ''],
  ['zero', 0],
  ['false', false],
  ['an empty list', []],
  ['an empty map', {}],
];

const NOT_EMPTY: [string, unknown][] = [
  ['a space', ' '],
  ['the text "0"', '0'],
  ['the text "false"', 'false'],
  ['a negative number', -1],
  ['NaN', NaN],
  ['true', true],
  ['a list with one item', ['a']],
  ['a map with one key', { a: 1 }],
];

describe('registerHelpers', () => {
  it('installs exactly the helpers SPEC §5 lists, beside the Handlebars built-ins', () => {
    const env = Handlebars.create();
    registerHelpers(env);
    expect(HELPER_NAMES).toEqual([
      'default',
      'required',
      'quote',
      'squote',
      'toJson',
      'toYaml',
      'indent',
      'nindent',
      'b64enc',
      'b64dec',
      'sha256',
      'upper',
      'lower',
      'trim',
      'replace',
      'trunc',
      'join',
      'split',
      'eq',
      'ne',
      'lt',
      'le',
      'gt',
      'ge',
      'and',
      'or',
      'not',
      'concat',
      'len',
    ]);
    expect(Object.keys(env.helpers).sort()).toEqual(
      [
        ...HELPER_NAMES,
        'blockHelperMissing',
        'each',
        'helperMissing',
        'if',
        'lookup',
        'unless',
        'with',
      ].sort(),
    );
  });

  it('removes the built-in log helper, which would print values to the console', () => {
    expect(hb.helpers.log).toBeUndefined();
  });

  it('leaves the global Handlebars environment untouched', () => {
    expect(Handlebars.helpers.quote).toBeUndefined();
    expect(Handlebars.helpers.log).toBeTypeOf('function');
  });

  it('refuses the global Handlebars environment', () => {
    expect(() => registerHelpers(Handlebars)).toThrow(
      'registerHelpers needs an isolated environment from Handlebars.create()',
    );
  });

  it.each([
    ['indent', { usage: '{{indent 4 text}}', minArgs: 2, maxArgs: 2 }],
    ['len', { usage: '{{len value}}', minArgs: 1, maxArgs: 1 }],
    ['and', { usage: '{{and a b}}', minArgs: 1, maxArgs: Infinity }],
  ])('publishes the usage and arity of %s for static checks', (name, signature) => {
    expect(HELPER_SIGNATURES[name as HelperName]).toEqual(signature);
  });
});

describe('argument checks', () => {
  const TOO_FEW: [HelperName, string][] = [
    ['default', 'default expects 2 arguments: {{default "nginx" parameters.image}}'],
    ['required', 'required expects 2 arguments: {{required "image is required" parameters.image}}'],
    ['quote', 'quote expects 1 argument: {{quote value}}'],
    ['squote', 'squote expects 1 argument: {{squote value}}'],
    ['toJson', 'toJson expects 1 argument: {{toJson value}}'],
    ['toYaml', 'toYaml expects 1 argument: {{toYaml value}}'],
    ['indent', 'indent expects 2 arguments: {{indent 4 text}}'],
    ['nindent', 'nindent expects 2 arguments: {{nindent 4 text}}'],
    ['b64enc', 'b64enc expects 1 argument: {{b64enc text}}'],
    ['b64dec', 'b64dec expects 1 argument: {{b64dec text}}'],
    ['sha256', 'sha256 expects 1 argument: {{sha256 text}}'],
    ['upper', 'upper expects 1 argument: {{upper text}}'],
    ['lower', 'lower expects 1 argument: {{lower text}}'],
    ['trim', 'trim expects 1 argument: {{trim text}}'],
    ['replace', 'replace expects 3 arguments: {{replace "-" "_" text}}'],
    ['trunc', 'trunc expects 2 arguments: {{trunc 63 text}}'],
    ['join', 'join expects 2 arguments: {{join "," list}}'],
    ['split', 'split expects 2 arguments: {{split "," text}}'],
    ['eq', 'eq expects 2 arguments: {{eq a b}}'],
    ['ne', 'ne expects 2 arguments: {{ne a b}}'],
    ['lt', 'lt expects 2 arguments: {{lt a b}}'],
    ['le', 'le expects 2 arguments: {{le a b}}'],
    ['gt', 'gt expects 2 arguments: {{gt a b}}'],
    ['ge', 'ge expects 2 arguments: {{ge a b}}'],
    ['and', 'and expects at least 1 argument: {{and a b}}'],
    ['or', 'or expects at least 1 argument: {{or a b}}'],
    ['not', 'not expects 1 argument: {{not value}}'],
    ['concat', 'concat expects at least 1 argument: {{concat a b}}'],
    ['len', 'len expects 1 argument: {{len value}}'],
  ];

  it.each(TOO_FEW)('%s called with one argument too few says %j', (name, message) => {
    const args = Array<string>(HELPER_SIGNATURES[name].minArgs - 1).fill('x');
    const error = failure(() => call(name, ...args));
    expect(error.message).toBe(message);
    expect(error.helper).toBe(name);
  });

  it.each(TOO_FEW.filter(([name]) => Number.isFinite(HELPER_SIGNATURES[name].maxArgs)))(
    '%s called with one argument too many says %j',
    (name, message) => {
      const args = Array<string>(HELPER_SIGNATURES[name].maxArgs + 1).fill('x');
      expect(failure(() => call(name, ...args)).message).toBe(message);
    },
  );

  it('reports the template line and column of the failing call', () => {
    const error = failure(() => render('a: 1\nb: {{indent 4}}'));
    expect(error.location).toEqual({ line: 2, column: 3 });
  });

  it('refuses a helper used as a block', () => {
    expect(failure(() => render('{{#eq a b}}x{{/eq}}', { a: 1, b: 1 })).message).toBe(
      'eq is not a block helper; call it inside an expression such as {{#if (...)}}: {{eq a b}}',
    );
  });

  it('refuses named arguments', () => {
    expect(failure(() => render('{{indent 4 text width=2}}', { text: 'x' })).message).toBe(
      'indent takes no named arguments: {{indent 4 text}}',
    );
  });

  it.each([
    ['indent with a secret as the count', '(indent a0 "x")'],
    ['trunc with a secret as the count', '(trunc a0 "x")'],
    ['b64dec of a secret that is not base64', '(b64dec a0)'],
    ['lt of a secret and a number', '(lt a0 1)'],
    ['len of a secret number', '(len a1)'],
    ['toJson of a secret NaN', '(toJson a1)'],
  ])('never quotes the offending value in the message: %s', (_case, expression) => {
    const error = failure(() => evaluate(expression, { a0: 's3cr3t!', a1: NaN }));
    expect(error.message).not.toContain('s3cr3t');
    expect(error.message).not.toContain('NaN:');
  });
});

describe('default and required', () => {
  it.each(EMPTY)('default returns the fallback when the value is %s', (_label, value) => {
    expect(call('default', 'nginx', value)).toBe('nginx');
  });

  it.each(NOT_EMPTY)('default returns the value itself when it is %s', (_label, value) => {
    expect(call('default', 'nginx', value)).toEqual(value);
  });

  it('default works as written in a template line', () => {
    expect(render('image: {{default "nginx" parameters.image}}', { parameters: {} })).toBe(
      'image: nginx',
    );
  });

  it('default turns a SafeString fallback into plain text', () => {
    const result = evaluate('(default (quote "x") a0)', { a0: '' });
    expect(result).toBe('"x"');
    expect(result).not.toBeInstanceOf(hb.SafeString);
  });

  it.each(NOT_EMPTY)('required returns the value when it is %s', (_label, value) => {
    expect(call('required', 'image is required', value)).toEqual(value);
  });

  it.each(EMPTY)('required fails with exactly its message when the value is %s', (_l, value) => {
    const error = failure(() => call('required', 'image is required', value));
    expect(error.message).toBe('image is required');
    expect(error.helper).toBe('required');
  });

  it('required fails the render of a template line with its position', () => {
    const error = failure(() =>
      render('kind: Pod\nimage: {{required "set parameters.image" parameters.image}}', {
        parameters: {},
      }),
    );
    expect([error.message, error.location]).toEqual([
      'set parameters.image',
      { line: 2, column: 7 },
    ]);
  });
});

describe('quote, squote, toJson and toYaml produce exact YAML text', () => {
  it.each([
    ['quote wraps text in JSON double quotes', 'quote', 'hello', '"hello"'],
    ['quote escapes quotes and backslashes', 'quote', 'say "hi" \\o/', '"say \\"hi\\" \\\\o/"'],
    ['quote escapes line breaks', 'quote', 'a\nb', '"a\\nb"'],
    ['quote escapes the YAML 1.1 line separator', 'quote', 'a\u2028b', '"a\\u2028b"'],
    ['quote turns a number into quoted text', 'quote', 3, '"3"'],
    ['quote turns a boolean into quoted text', 'quote', true, '"true"'],
    ['quote turns nothing into the empty string', 'quote', undefined, '""'],
    ['squote wraps text in single quotes', 'squote', 'hello', "'hello'"],
    ['squote doubles single quotes', 'squote', "it's", "'it''s'"],
    ['squote keeps backslashes literal', 'squote', 'C:\\dir', "'C:\\dir'"],
    ['squote falls back to double quotes for a line break', 'squote', 'a\nb', '"a\\nb"'],
    ['squote falls back to double quotes for a tab', 'squote', 'a\tb', '"a\\tb"'],
    ['toJson writes compact JSON', 'toJson', { a: [1, 'x'], b: null }, '{"a":[1,"x"],"b":null}'],
    ['toJson quotes a YAML keyword', 'toJson', 'off', '"off"'],
    ['toJson writes nothing as null', 'toJson', undefined, 'null'],
    [
      'toYaml writes a map as block YAML',
      'toYaml',
      { cpu: '500m', mem: '1Gi' },
      'cpu: 500m\nmem: 1Gi',
    ],
    ['toYaml writes a list as block YAML', 'toYaml', ['a', 'b'], '- a\n- b'],
    ['toYaml writes an empty map in flow style', 'toYaml', {}, '{}'],
    ['toYaml writes nothing as null', 'toYaml', undefined, 'null'],
    ['toYaml writes NaN as .nan', 'toYaml', NaN, '.nan'],
    ['toYaml quotes words YAML 1.1 reads as booleans', 'toYaml', { on: 'off' }, '"on": "off"'],
    ['toYaml writes a multi-line string on one line', 'toYaml', 'a\nb\n', '"a\\nb\\n"'],
    [
      'toYaml uses a literal block inside a map',
      'toYaml',
      { sh: 'echo a\necho b\n' },
      'sh: |\n  echo a\n  echo b',
    ],
    ['toYaml double-quotes a text ending in blank lines', 'toYaml', { x: 'y\n\n' }, 'x: "y\\n\\n"'],
  ])('%s', (_case, helper, value, expected) => {
    expect(yamlOf(call(helper, value))).toBe(expected);
  });

  it('toYaml repeats a shared object instead of emitting anchors and aliases', () => {
    const shared = { a: 1 };
    expect(yamlOf(call('toYaml', [shared, shared]))).toBe('- a: 1\n- a: 1');
  });

  it.each([
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['a nested -Infinity', { a: [-Infinity] }],
  ])('toJson refuses %s, which JSON cannot encode', (_label, value) => {
    expect(failure(() => call('toJson', value)).message).toBe(
      'toJson cannot encode NaN or Infinity (JSON has no such numbers; toYaml has): {{toJson value}}',
    );
  });

  it.each([
    ['quote', 'a list', ['a'], 'quote expects text, got a list: {{quote value}}'],
    ['squote', 'a map', { a: 1 }, 'squote expects text, got a map: {{squote value}}'],
  ])('%s refuses %s', (helper, _label, value, message) => {
    expect(failure(() => call(helper, value)).message).toBe(message);
  });
});

const HOSTILE_TEXT: [string, string][] = [
  ['a line break', 'line1\nline2'],
  ['a trailing line break', 'last line\n'],
  ['two trailing line breaks', 'x\n\n'],
  ['only line breaks', '\n\n'],
  ['a carriage return', 'a\r\nb'],
  ['a key: value pair', 'key: value'],
  ['a flow map', '{a: b}'],
  ['a flow list', '[x]'],
  ['an alias', '*alias'],
  ['an anchor', '&anchor x'],
  ['a tag', '!!tag'],
  ['a binary tag', '!!binary aGk='],
  ['a trailing comment', 'value # comment'],
  ['a leading comment mark', '# comment'],
  ['leading and trailing spaces', '  padded  '],
  ['only spaces', '   '],
  ['leading spaces before a line break', '  lead\nx'],
  ['leading spaces on a second line', 'first\n  second'],
  ['trailing spaces before a line break', 'a  \nb'],
  ['double quotes', 'say "hi"'],
  ['single quotes', "it's 'quoted'"],
  ['backslashes', 'C:\\path\\n'],
  ['unicode', 'ünïcødé € 😀 日本'],
  ['a line separator U+2028', 'a\u2028b'],
  ['a paragraph separator U+2029', 'a\u2029b'],
  ['a next-line U+0085', 'a\u0085b'],
  ['a byte-order mark', '\ufeffbom'],
  ['a tab', 'a\tb'],
  ['control characters', 'a\u0000b\u0007c\u001bd\u007f'],
  ['a lone surrogate', 'a\ud800b'],
  ['a document marker', '---'],
  ['a document marker on its own line', 'a\n---\nb'],
  ['a document end marker', '...'],
  ['a directive', '%YAML 1.2'],
  ['a YAML 1.1 boolean', 'off'],
  ['another YAML 1.1 boolean', 'yes'],
  ['a null word', 'null'],
  ['a tilde', '~'],
  ['an octal-looking number', '0755'],
  ['a number in exponent form', '1e3'],
  ['a hexadecimal number', '0x1F'],
  ['an infinity word', '.inf'],
  ['the empty string', ''],
  ['a list marker', '- item'],
  ['a mapping key marker', '? key'],
  ['a block scalar indicator', '|'],
  ['a folded scalar indicator', '> folded'],
  ['a trailing colon', 'key:'],
  ['a Handlebars expression', '{{parameters.x}}'],
  ['a YAML 1.1 merge key', '<<'],
  ['a YAML 1.1 date', '2001-12-14'],
  ['a YAML 1.1 number with underscores', '1_000'],
  ['a YAML 1.1 sexagesimal number', '1:20'],
  ['a YAML 1.1 binary number', '0b101'],
  ['a capitalised boolean', 'True'],
  ['a one-letter YAML 1.1 boolean', 'y'],
  ['a signed number', '+12'],
  ['a fraction without a leading digit', '.5'],
  ['a number with a trailing dot', '1.'],
  ['a very long line', 'word '.repeat(60).trim()],
];

const HOSTILE_STRUCTURES: [string, unknown][] = [
  ['a whole number', 42],
  ['a negative fraction', -3.25],
  ['a huge number', 1e21],
  ['a tiny number', 1e-7],
  ['true', true],
  ['false', false],
  ['null', null],
  ['an empty list', []],
  ['an empty map', {}],
  ['nested resources', { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: 0.1 } }],
  ['a list of hostile strings', HOSTILE_TEXT.map(([, text]) => text)],
  [
    'a map of hostile strings',
    Object.fromEntries(HOSTILE_TEXT.map(([label, text]) => [label, text])),
  ],
  [
    'a map with hostile keys',
    Object.fromEntries(HOSTILE_TEXT.map(([label, text]) => [text, label])),
  ],
  ['a map with a 1100-character key', { ['k'.repeat(1100)]: 'v' }],
  ['a map with a YAML 1.1 merge key', { '<<': { a: 1 }, b: 2 }],
  ['nested lists', [[['x']], [], [{}]]],
  ['a map whose last value ends in blank lines', { first: 1, last: 'x\n\n' }],
  ['a list whose last item is only line breaks', ['a', '\n\n\n']],
  [
    'a list of maps with multi-line values',
    [{ script: '#!/bin/sh\necho hi\n' }, { a: '  lead\nx' }],
  ],
];

describe.each(['toYaml', 'toJson', 'quote', 'squote'])('%s of hostile text', (helper) => {
  it.each(HOSTILE_TEXT)('returns one line of YAML that parses back exactly for %s', (_l, value) => {
    const yaml = yamlOf(call(helper, value));
    expect(yaml).not.toMatch(/[\n\r\u0085\u2028\u2029]/);
    expect(parseYaml(`key: ${yaml}`)).toEqual({ key: value });
    expect(parseYaml(`key:${nindent(2, yaml)}`)).toEqual({ key: value });
    expect(parseYaml(`a:\n  key:${nindent(4, yaml)}\n  next: 1`)).toEqual({
      a: { key: value, next: 1 },
    });
  });
});

describe.each(['toYaml', 'toJson'])('%s of hostile structures', (helper) => {
  it.each(HOSTILE_STRUCTURES)('returns YAML that parses back exactly for %s', (_l, value) => {
    const yaml = yamlOf(call(helper, value));
    if (!yaml.includes('\n')) expect(parseYaml(`key: ${yaml}`)).toEqual({ key: value });
    expect(parseYaml(`key:${nindent(2, yaml)}`)).toEqual({ key: value });
    expect(parseYaml(`a:\n  key:${nindent(4, yaml)}\n\n  next: 1`)).toEqual({
      a: { key: value, next: 1 },
    });
    expect(parseYaml(`list:\n  -${nindent(4, yaml)}`)).toEqual({ list: [value] });
  });

  it.each(HOSTILE_STRUCTURES)(
    'writes valid JSON or block YAML without a trailing newline for %s',
    (_l, value) => {
      const yaml = yamlOf(call(helper, value));
      expect(yaml.endsWith('\n')).toBe(false);
      if (helper === 'toJson') expect(JSON.parse(yaml)).toEqual(value);
    },
  );
});

describe('prototype-pollution keys are ordinary keys', () => {
  const POLLUTING = '{"__proto__":{"polluted":"x"},"constructor":{"prototype":{"polluted":"x"}}}';

  it.each([
    ['toJson', POLLUTING],
    ['toYaml', '__proto__:\n  polluted: x\nconstructor:\n  prototype:\n    polluted: x'],
  ])('%s writes them as keys and they parse back as keys', (helper, expected) => {
    const value: unknown = JSON.parse(POLLUTING);
    const yaml = yamlOf(call(helper, value));
    expect(yaml).toBe(expected);
    const back = (parseYaml(`key:${nindent(2, yaml)}`) as { key: object }).key;
    expect(Object.keys(back)).toEqual(['__proto__', 'constructor']);
    expect(back).toEqual(value);
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
    expect(Object.prototype).not.toHaveProperty('polluted');
  });

  it('len counts them as keys', () => {
    expect(call('len', JSON.parse(POLLUTING))).toBe(2);
    expect(render('{{len parameters.m}}', { parameters: { m: JSON.parse(POLLUTING) } })).toBe('2');
  });

  it('eq compares them as keys', () => {
    expect(call('eq', JSON.parse(POLLUTING), JSON.parse(POLLUTING))).toBe(true);
    expect(call('eq', JSON.parse('{"__proto__":1}'), {})).toBe(false);
    expect(Object.prototype).not.toHaveProperty('polluted');
  });
});

describe('indent and nindent', () => {
  it.each([
    ['indent pads every line', 'indent', 4, 'a\nb', '    a\n    b'],
    ['indent pads empty lines too, as Sprig does', 'indent', 2, 'a\n\nb', '  a\n  \n  b'],
    ['indent by zero changes nothing', 'indent', 0, 'a\nb', 'a\nb'],
    ['indent accepts the count as digits', 'indent', '2', 'a', '  a'],
    ['indent turns a number into text', 'indent', 2, 7, '  7'],
    ['nindent starts with a line break', 'nindent', 2, 'a\nb', '\n  a\n  b'],
    ['nindent of nothing is a padded empty line', 'nindent', 2, undefined, '\n  '],
  ])('%s', (_case, helper, count, text, expected) => {
    const result = call(helper, count, text);
    expect(result).toBe(expected);
    expect(result).not.toBeInstanceOf(hb.SafeString);
  });

  it.each([
    ['indent', '  a: 1\n  b: [x]'],
    ['nindent', '\n  a: 1\n  b: [x]'],
  ])('%s of a SafeString returns a SafeString', (helper, expected) => {
    expect(yamlOf(call(helper, 2, safe('a: 1\nb: [x]')))).toBe(expected);
  });

  it('nindent of a plain value that looks like YAML stays plain text', () => {
    const result = call('nindent', 2, 'a: 1\n- b');
    expect(result).toBe('\n  a: 1\n  - b');
    expect(result).not.toBeInstanceOf(hb.SafeString);
  });

  it.each([
    ['a negative count', -1, 'x', 'indent expects a whole number of spaces, got a negative number'],
    ['a fractional count', 2.5, 'x', 'indent expects a whole number of spaces, got a number'],
    ['a word as the count', 'four', 'x', 'indent expects a whole number of spaces, got a string'],
    ['a map as the text', 4, { a: 1 }, 'indent expects text, got a map'],
    [
      'a result over the size limit',
      MAX_HELPER_TEXT_LENGTH,
      'x',
      'indent would produce more than 2097152 characters',
    ],
  ])('indent refuses %s', (_case, count, text, message) => {
    expect(failure(() => call('indent', count, text)).message).toBe(
      `${message}: {{indent 4 text}}`,
    );
  });

  it('lays out toYaml of a map under a key in a template', () => {
    const out = render('spec:\n  resources:{{nindent 4 (toYaml parameters.resources)}}\n  x: 1', {
      parameters: { resources: { limits: { cpu: '1', memory: '1Gi' } } },
    });
    expect(out).toBe('spec:\n  resources:\n    limits:\n      cpu: "1"\n      memory: 1Gi\n  x: 1');
  });
});

describe('text helpers', () => {
  it.each([
    ['b64enc encodes UTF-8 text', 'b64enc', ['hello'], 'aGVsbG8='],
    ['b64enc encodes non-ASCII text as UTF-8', 'b64enc', ['ünï'], 'w7xuw68='],
    ['b64enc of nothing is empty', 'b64enc', [undefined], ''],
    ['b64dec decodes to UTF-8 text', 'b64dec', ['aGVsbG8='], 'hello'],
    ['b64dec ignores line breaks as Go does', 'b64dec', ['aGVs\r\nbG8='], 'hello'],
    ['b64dec keeps a byte-order mark', 'b64dec', ['77u/eA=='], '\ufeffx'],
    [
      'sha256 gives the hex digest of UTF-8 text',
      'sha256',
      ['hello'],
      '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824',
    ],
    [
      'sha256 hashes non-ASCII text as UTF-8',
      'sha256',
      ['ü'],
      '607474ca475a9724d7360aba71a56d5df77e61350e3f724cfa1f46e857e2d85f',
    ],
    [
      'sha256 of the empty string',
      'sha256',
      [''],
      'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    ],
    ['upper handles unicode', 'upper', ['Straße'], 'STRASSE'],
    ['upper turns a number into text', 'upper', [3], '3'],
    ['lower handles unicode', 'lower', ['ÀB'], 'àb'],
    ['trim removes surrounding whitespace', 'trim', ['  a b \n\t'], 'a b'],
    ['replace replaces every occurrence', 'replace', ['-', '_', 'a-b-c'], 'a_b_c'],
    ['replace can delete', 'replace', ['.', '', 'a.b.c'], 'abc'],
    ['replace takes the replacement literally', 'replace', ['x', '$&$1', 'axb'], 'a$&$1b'],
    [
      'replace of an empty pattern matches around every character',
      'replace',
      ['', '-', 'ab'],
      '-a-b-',
    ],
    ['replace does not rescan replaced text', 'replace', ['a', 'aa', 'aba'], 'aabaa'],
    ['trunc keeps the first n characters', 'trunc', [3, 'abcdef'], 'abc'],
    ['trunc with a negative n keeps the last characters', 'trunc', [-3, 'abcdef'], 'def'],
    ['trunc leaves a short text alone', 'trunc', [10, 'abc'], 'abc'],
    ['trunc with a large negative n leaves a short text alone', 'trunc', [-10, 'abc'], 'abc'],
    ['trunc to zero gives the empty string', 'trunc', [0, 'abc'], ''],
    ['trunc counts characters, not UTF-16 units', 'trunc', [2, '😀😀😀'], '😀😀'],
    ['trunc accepts the count as digits', 'trunc', ['2', 'abc'], 'ab'],
    ['join joins a list', 'join', [',', ['a', 'b']], 'a,b'],
    [
      'join turns scalars into text and skips nothing',
      'join',
      [', ', [1, true, null, 'x']],
      '1, true, x',
    ],
    ['join of a single text is that text', 'join', [',', 'solo'], 'solo'],
    ['join of an empty list is empty', 'join', [',', []], ''],
    ['join of nothing is empty', 'join', [',', undefined], ''],
    ['concat joins texts', 'concat', ['a', 1, true, null, 'b'], 'a1trueb'],
    ['len counts characters', 'len', ['héllo😀'], 6],
    ['len counts list items', 'len', [[1, 2, 3]], 3],
    ['len counts map keys', 'len', [{ a: 1, b: 2 }], 2],
    ['len of nothing is zero', 'len', [undefined], 0],
  ])('%s', (_case, helper, args, expected) => {
    expect(call(helper, ...args)).toBe(expected);
  });

  it.each([
    [
      'b64dec refuses text outside the base64 alphabet',
      'b64dec',
      ['not base64!'],
      'b64dec expects standard base64 text with = padding: {{b64dec text}}',
    ],
    [
      'b64dec refuses missing padding',
      'b64dec',
      ['aGVsbG8'],
      'b64dec expects standard base64 text with = padding: {{b64dec text}}',
    ],
    [
      'b64dec refuses bytes that are not UTF-8',
      'b64dec',
      ['/w=='],
      'b64dec decoded bytes that are not UTF-8 text: {{b64dec text}}',
    ],
    [
      'trunc refuses a word as the count',
      'trunc',
      ['x', 'abc'],
      'trunc expects a whole number of characters, got a string: {{trunc 63 text}}',
    ],
    ['upper refuses a list', 'upper', [['a']], 'upper expects text, got a list: {{upper text}}'],
    [
      'join refuses a map',
      'join',
      [',', { a: 1 }],
      'join expects a list, got a map: {{join "," list}}',
    ],
    [
      'join refuses nested lists',
      'join',
      [',', [['a']]],
      'join expects a list of scalars: {{join "," list}}',
    ],
    [
      'concat refuses a list mixed with text',
      'concat',
      [['a'], 'b'],
      'concat expects either lists only or scalars only: {{concat a b}}',
    ],
    [
      'concat refuses maps',
      'concat',
      [{ a: 1 }, { b: 2 }],
      'concat expects either lists only or scalars only: {{concat a b}}',
    ],
    [
      'len refuses a number',
      'len',
      [5],
      'len expects text, a list or a map, got a number: {{len value}}',
    ],
    [
      'replace refuses a result over the size limit',
      'replace',
      ['', 'x'.repeat(MAX_HELPER_TEXT_LENGTH), 'ab'],
      'replace would produce more than 2097152 characters: {{replace "-" "_" text}}',
    ],
  ])('%s', (_case, helper, args, message) => {
    expect(failure(() => call(helper, ...args)).message).toBe(message);
  });

  it.each(HOSTILE_TEXT.filter(([label]) => label !== 'a lone surrogate'))(
    'b64dec undoes b64enc for %s',
    (_label, value) => {
      expect(evaluate('(b64dec (b64enc a0))', { a0: value })).toBe(value);
    },
  );

  it('b64enc encodes a lone surrogate, which UTF-8 cannot carry, as U+FFFD', () => {
    expect(call('b64enc', 'a\ud800')).toBe('Ye+/vQ==');
  });

  it('sha256 of toJson hashes the JSON text', () => {
    expect(evaluate('(sha256 (toJson a0))', { a0: { a: 1 } })).toBe(
      createHash('sha256').update('{"a":1}').digest('hex'),
    );
  });
});

describe('lists', () => {
  it.each([
    ['split cuts text at every separator', [',', 'a,b,,c'], ['a', 'b', '', 'c']],
    ['split of the empty string is one empty item', [',', ''], ['']],
    ['split with an empty separator gives characters', ['', 'a😀'], ['a', '😀']],
    ['split accepts a multi-character separator', [', ', 'a, b'], ['a', 'b']],
  ])('%s', (_case, args, expected) => {
    expect(call('split', ...args)).toEqual(expected);
  });

  it('concat concatenates lists without changing them', () => {
    const first = ['a'];
    const second = ['b', { c: 1 }];
    expect(call('concat', first, second)).toEqual(['a', 'b', { c: 1 }]);
    expect([first, second]).toEqual([['a'], ['b', { c: 1 }]]);
  });

  it('each loops over a split list in a template', () => {
    const out = render(
      'hosts:\n{{#each (split "," parameters.hosts)}}  - {{quote (trim this)}}\n{{/each}}',
      {
        parameters: { hosts: 'a.example.com, b.example.com' },
      },
    );
    expect(out).toBe('hosts:\n  - "a.example.com"\n  - "b.example.com"\n');
  });
});

describe('comparisons and logic', () => {
  it.each([
    ['eq of equal texts is true', '(eq "a" "a")', true],
    ['eq of equal numbers is true', '(eq 3 3)', true],
    ['eq does not convert types', '(eq 3 "3")', false],
    ['eq of a boolean and its text is false', '(eq true "true")', false],
    ['eq treats null and a missing value alike', '(eq a1 missing)', true],
    ['eq compares lists and maps by content', '(eq a2 a3)', true],
    ['eq sees a differing map', '(eq a2 a4)', false],
    ['ne of different texts is true', '(ne "a" "b")', true],
    ['ne of equal numbers is false', '(ne 1 1)', false],
    ['lt compares numbers', '(lt 1 2)', true],
    ['lt is strict', '(lt 2 2)', false],
    ['le accepts equality', '(le 2 2)', true],
    ['gt compares texts', '(gt "b" "a")', true],
    ['ge compares texts', '(ge "a" "b")', false],
    ['lt with NaN is false', '(lt a5 1)', false],
    ['ge with NaN is false', '(ge a5 a5)', false],
    ['and of non-empty values is true', '(and true 1 "x")', true],
    ['and with a zero is false', '(and true 0)', false],
    ['and of one value tests that value', '(and "x")', true],
    ['and with an empty list is false', '(and "x" a6)', false],
    ['or of empty values is false', '(or false "" a6 a7 a1)', false],
    ['or with one non-empty value is true', '(or 0 "x")', true],
    ['not of the empty string is true', '(not "")', true],
    ['not of a text is false', '(not "x")', false],
    ['not of an empty map is true', '(not a7)', true],
    ['not of a SafeString reads its text', '(not (quote ""))', false],
  ])('%s', (_case, expression, expected) => {
    const context = {
      a1: null,
      a2: ['a', { b: 1 }],
      a3: ['a', { b: 1 }],
      a4: ['a', { b: 2 }],
      a5: NaN,
      a6: [],
      a7: {},
    };
    expect(evaluate(expression, context)).toBe(expected);
  });

  it.each([
    [
      'lt of a number and a string',
      '(lt 1 "2")',
      'lt cannot compare a number with a string: {{lt a b}}',
    ],
    [
      'gt of nothing and a number',
      '(gt missing 1)',
      'gt cannot compare nothing with a number: {{gt a b}}',
    ],
    [
      'le of two booleans',
      '(le true false)',
      'le cannot compare a boolean with a boolean: {{le a b}}',
    ],
  ])('refuses to order %s', (_case, expression, message) => {
    expect(failure(() => evaluate(expression)).message).toBe(message);
  });

  it('a conditional block follows and/eq in a template', () => {
    const template =
      '{{#if (and parameters.tls (eq parameters.mode "strict"))}}tls: on{{else}}tls: off{{/if}}';
    expect(render(template, { parameters: { tls: true, mode: 'strict' } })).toBe('tls: on');
    expect(render(template, { parameters: { tls: false, mode: 'strict' } })).toBe('tls: off');
  });
});

describe('the SafeString contract', () => {
  it.each([
    ['default', '(default (quote a0) "")', '"x"'],
    ['required', '(required "m" (toJson a0))', '"x"'],
    ['upper', '(upper (quote a0))', '"X"'],
    ['lower', '(lower (quote a0))', '"x"'],
    ['trim', '(trim (toYaml a0))', 'x'],
    ['replace', '(replace "x" "y" (quote a0))', '"y"'],
    ['trunc', '(trunc 2 (quote a0))', '"x'],
    ['b64enc', '(b64enc (quote a0))', 'Ingi'],
    ['b64dec', '(b64dec (b64enc (quote a0)))', '"x"'],
    ['sha256', '(sha256 (quote a0))', createHash('sha256').update('"x"').digest('hex')],
    ['concat', '(concat (quote a0) "!")', '"x"!'],
    ['join', '(join "," (split "," (quote a0)))', '"x"'],
    ['len', '(len (quote a0))', 3],
    ['eq', '(eq (quote a0) "\\"x\\"")', true],
  ])(
    '%s reads a SafeString argument as text and returns a plain value',
    (_h, expression, expected) => {
      const result = evaluate(expression, { a0: 'x' });
      expect(result).toEqual(expected);
      expect(result).not.toBeInstanceOf(hb.SafeString);
    },
  );

  it.each([
    ['quote', 'x'],
    ['squote', 'x'],
    ['toJson', 'x'],
    ['toYaml', 'x'],
  ])('%s always returns a SafeString', (helper, value) => {
    expect(call(helper, value)).toBeInstanceOf(hb.SafeString);
  });
});
