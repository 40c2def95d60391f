// Tables for coerceParameter (SPEC §3 "Types"): conversions, exact mismatch messages, Secret
// redaction, truncation, prototype-pollution safety, and emptyValue.
import { afterEach, describe, expect, it } from 'vitest';
import type { JsonValue } from '../../api/object-meta.ts';
import type { ParameterType } from '../../api/template.ts';
import { coerceParameter, emptyValue } from './parameter-types.ts';

function coerce(type: ParameterType | undefined, value: JsonValue, secret = false): unknown {
  return coerceParameter({ name: 'p', type, value, secret });
}

function messageOf(type: ParameterType, value: JsonValue, secret = false, name = 'p'): string {
  const outcome = coerceParameter({ name, type, value, secret });
  if (outcome.ok) {
    throw new Error(`expected a failure, got ${JSON.stringify(outcome.value)}`);
  }
  expect(outcome.problems).toHaveLength(1);
  return outcome.problems[0]?.message ?? '';
}

describe('coerceParameter converts values that satisfy the type', () => {
  it.each<[ParameterType | undefined, JsonValue, JsonValue]>([
    ['string', 'nginx:1.27', 'nginx:1.27'],
    ['string', '', ''],
    ['string', 3, '3'],
    ['string', 2.5, '2.5'],
    ['string', -0.001, '-0.001'],
    ['string', 1e21, '1e+21'],
    ['string', true, 'true'],
    ['string', false, 'false'],
    ['number', 3, 3],
    ['number', 2.5, 2.5],
    ['number', '3', 3],
    ['number', '3.14', 3.14],
    ['number', '-2.5e10', -2.5e10],
    ['number', '0x1p-2', 0.25],
    ['number', '1_000', 1000],
    ['number', 'Inf', Infinity],
    ['number', '-Infinity', -Infinity],
    ['number', 'NaN', NaN],
    ['bool', true, true],
    ['bool', false, false],
    ['bool', 'true', true],
    ['bool', 'True', true],
    ['bool', '1', true],
    ['bool', 't', true],
    ['bool', 'FALSE', false],
    ['bool', '0', false],
    ['bool', 'F', false],
    ['array', [], []],
    ['array', [1, 'a', { b: null }], [1, 'a', { b: null }]],
    ['array', '[1,2]', [1, 2]],
    ['array', ' [ "a" ] ', ['a']],
    ['array', '[]', []],
    ['object', {}, {}],
    ['object', { a: [1] }, { a: [1] }],
    ['object', '{"a":1}', { a: 1 }],
    ['object', '{}', {}],
    [undefined, 'x', 'x'],
    [undefined, 3, 3],
    [undefined, null, null],
    [undefined, [1], [1]],
    [undefined, { a: 1 }, { a: 1 }],
    [undefined, '{"a":1}', '{"a":1}'],
  ])('a %s parameter turns %j into %j', (type, value, expected) => {
    expect(coerce(type, value)).toEqual({ ok: true, value: expected });
  });

  it.each<[ParameterType]>([['array'], ['object']])(
    'a native value for a %s parameter comes back as the same object',
    (type) => {
      const value: JsonValue = type === 'array' ? [1] : { a: 1 };
      const outcome = coerceParameter({ name: 'p', type, value, secret: false });
      expect(outcome.ok && outcome.value).toBe(value);
    },
  );
});

describe('coerceParameter names the parameter, the type and the value on a mismatch', () => {
  it.each<[ParameterType, JsonValue, string]>([
    ['number', 'three', 'parameter "p": expected a number, got "three"'],
    ['number', ' 3', 'parameter "p": expected a number, got " 3"'],
    ['number', '', 'parameter "p": expected a number, got ""'],
    ['number', '1e400', 'parameter "p": expected a number, got "1e400"'],
    ['number', true, 'parameter "p": expected a number, got true'],
    ['number', [1], 'parameter "p": expected a number, got a list [1]'],
    ['number', { a: 1 }, 'parameter "p": expected a number, got a map {"a":1}'],
    ['bool', 'yes', 'parameter "p": expected a boolean, got "yes"'],
    ['bool', 'true ', 'parameter "p": expected a boolean, got "true "'],
    ['bool', '', 'parameter "p": expected a boolean, got ""'],
    ['bool', 1, 'parameter "p": expected a boolean, got 1'],
    ['bool', 0, 'parameter "p": expected a boolean, got 0'],
    ['string', [1, 2], 'parameter "p": expected a string, got a list [1,2]'],
    ['string', { a: 'b' }, 'parameter "p": expected a string, got a map {"a":"b"}'],
    ['array', 'a,b', 'parameter "p": expected an array, got "a,b"'],
    ['array', '', 'parameter "p": expected an array, got ""'],
    ['array', '{"a":1}', 'parameter "p": expected an array, got "{\\"a\\":1}"'],
    ['array', '"[1]"', 'parameter "p": expected an array, got "\\"[1]\\""'],
    ['array', 'null', 'parameter "p": expected an array, got "null"'],
    ['array', '[1,', 'parameter "p": expected an array, got "[1,"'],
    ['array', 3, 'parameter "p": expected an array, got 3'],
    ['array', { a: 1 }, 'parameter "p": expected an array, got a map {"a":1}'],
    ['object', '[1]', 'parameter "p": expected an object, got "[1]"'],
    ['object', 'a=b', 'parameter "p": expected an object, got "a=b"'],
    ['object', 'null', 'parameter "p": expected an object, got "null"'],
    ['object', [], 'parameter "p": expected an object, got a list []'],
    ['object', false, 'parameter "p": expected an object, got false'],
  ])('a %s parameter given %j fails with: %s', (type, value, message) => {
    expect(coerce(type, value)).toEqual({
      ok: false,
      problems: [{ path: 'parameters.p', reason: 'InvalidParameter', message }],
    });
  });

  it('uses the parameter name in the path and the message', () => {
    expect(
      coerceParameter({ name: 'replicas', type: 'number', value: 'three', secret: false }),
    ).toEqual({
      ok: false,
      problems: [
        {
          path: 'parameters.replicas',
          reason: 'InvalidParameter',
          message: 'parameter "replicas": expected a number, got "three"',
        },
      ],
    });
  });

  it.each<[ParameterType, string]>([
    ['string', 'a string'],
    ['number', 'a number'],
    ['bool', 'a boolean'],
    ['array', 'an array'],
    ['object', 'an object'],
  ])('null never satisfies a %s parameter and the message says so', (type, expected) => {
    expect(messageOf(type, null)).toBe(
      `parameter "p": expected ${expected}, got null (null never satisfies a typed parameter: ` +
        'give a value, or drop the type)',
    );
  });

  it.each<[string, JsonValue, string]>([
    ['a string of 100 characters is quoted whole', 'x'.repeat(100), `"${'x'.repeat(100)}"`],
    ['a string of 101 characters is cut at 100', 'x'.repeat(101), `"${'x'.repeat(100)}…"`],
    ['a long string is cut at 100', `${'a'.repeat(100)}SECRET-TAIL`, `"${'a'.repeat(100)}…"`],
    ['a cut never splits an emoji', '😀'.repeat(150), `"${'😀'.repeat(100)}…"`],
    ['a long list is cut at 100', Array(60).fill(1), `a list [${'1,'.repeat(49)}1…`],
  ])('%s', (_name, value, shown) => {
    expect(messageOf('number', value)).toBe(`parameter "p": expected a number, got ${shown}`);
  });
});

describe('coerceParameter never reveals a value from a Secret', () => {
  it.each<[ParameterType, JsonValue, string]>([
    ['number', 'hunter2', 'a value from a Secret that is not a valid number'],
    ['number', '', 'a value from a Secret that is not a valid number'],
    ['bool', 'hunter2', 'a value from a Secret that is not a valid boolean'],
    ['array', 'hunter2', 'a value from a Secret that is not a valid JSON array'],
    ['array', '{"password":"hunter2"}', 'a value from a Secret that is not a valid JSON array'],
    ['object', '["hunter2"]', 'a value from a Secret that is not a valid JSON object'],
    ['string', ['hunter2'], 'a value from a Secret that is not a valid string'],
    ['number', null, 'a value from a Secret that is not a valid number'],
  ])('a %s parameter from a Secret holding %j fails without quoting it', (type, value, got) => {
    const message = messageOf(type, value, true, 'dbPassword');
    expect(message).toBe(`parameter "dbPassword": expected ${typeLabel(type)}, got ${got}`);
    expect(message).not.toContain('hunter2');
    expect(message).not.toMatch(/\d+ characters|length/);
  });

  it.each<[ParameterType, JsonValue, JsonValue]>([
    ['string', 's3cr3t', 's3cr3t'],
    ['number', '42', 42],
    ['bool', 'true', true],
    ['object', '{"user":"u"}', { user: 'u' }],
  ])('a %s parameter from a Secret holding %j still converts to %j', (type, value, expected) => {
    expect(coerce(type, value, true)).toEqual({ ok: true, value: expected });
  });
});

function typeLabel(type: ParameterType): string {
  return {
    string: 'a string',
    number: 'a number',
    bool: 'a boolean',
    array: 'an array',
    object: 'an object',
  }[type];
}

describe('coerceParameter keeps JSON keys such as __proto__ as ordinary own keys', () => {
  afterEach(() => {
    // If a test ever polluted the prototype, do not let it leak into other tests.
    delete (Object.prototype as Record<string, unknown>).polluted;
    delete (Object.prototype as Record<string, unknown>).x;
  });

  const hostile = '{"__proto__": {"polluted": true}, "constructor": {"prototype": {"x": 1}}}';

  it.each<[string, ParameterType, string, (v: JsonValue) => JsonValue]>([
    ['an object parameter', 'object', hostile, (v) => v],
    ['an array parameter', 'array', `[${hostile}]`, (v) => (v as JsonValue[])[0] ?? null],
  ])('%s parses hostile keys without touching Object.prototype', (_name, type, text, pick) => {
    const outcome = coerce(type, text) as { ok: true; value: JsonValue };
    expect(outcome.ok).toBe(true);
    const parsed = pick(outcome.value) as Record<string, JsonValue>;
    expect(Object.keys(parsed)).toEqual(['__proto__', 'constructor']);
    expect(Object.getOwnPropertyDescriptor(parsed, '__proto__')?.value).toEqual({ polluted: true });
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(JSON.stringify(parsed)).toBe(
      '{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}}}',
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });
});

describe('emptyValue gives the value of an unset, undefaulted parameter', () => {
  it.each<[ParameterType | undefined, JsonValue]>([
    [undefined, ''],
    ['string', ''],
    ['number', ''],
    ['bool', ''],
    ['array', []],
    ['object', {}],
  ])('a %s parameter is empty as %j', (type, expected) => {
    expect(emptyValue(type)).toEqual(expected);
  });

  it.each<[ParameterType]>([['array'], ['object']])('each call gives a fresh empty %s', (type) => {
    expect(emptyValue(type)).not.toBe(emptyValue(type));
  });
});

function nested(depth: number, leaf: JsonValue = 1): JsonValue {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { k: value };
  return value;
}

describe('coerceParameter refuses values nested deeper than 64 levels (issue #22, ADR 0017)', () => {
  const refusal = 'parameter "p": nests deeper than 64 levels (the limit for any parameter value)';
  it.each<[string, ParameterType | undefined, JsonValue, boolean]>([
    ['a native list of 65 levels, untyped', undefined, nested(65), false],
    ['a native list of 65 levels, type array', 'array', nested(65), false],
    ['a native map of 100,000 levels, type object', 'object', nested(100_001), false],
    [
      'JSON text of 5,000 levels from a Secret, type array',
      'array',
      `${'['.repeat(5000)}${']'.repeat(5000)}`,
      true,
    ],
    [
      'JSON text of 65 levels, type object',
      'object',
      JSON.stringify(nested(65, 'x')).replace(/^\[/, '{"a":[').concat('}'),
      false,
    ],
  ])('%s', (_what, type, value, secret) => {
    const outcome = coerceParameter({ name: 'p', type, value, secret });
    expect(outcome).toEqual({
      ok: false,
      problems: [{ path: 'parameters.p', reason: 'InvalidParameter', message: refusal }],
    });
  });

  it.each<[string, ParameterType | undefined, JsonValue]>([
    ['a native value of exactly 64 levels', 'object', nested(64)],
    ['JSON text of exactly 64 levels', 'array', `${'['.repeat(64)}${']'.repeat(64)}`],
    ['an untyped string that looks like deep JSON (never parsed)', undefined, '['.repeat(5000)],
  ])('lets %s through', (_what, type, value) => {
    expect(coerceParameter({ name: 'p', type, value, secret: false }).ok).toBe(true);
  });
});
