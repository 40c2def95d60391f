import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../api/object-meta.ts';
import type { ParameterDeclaration, TemplateSpec } from '../../api/template.ts';
import type { ParameterValue } from '../../api/template-instance.ts';
import {
  aConfigMap,
  aSecret,
  aService,
  aTemplate,
  anInstance,
} from '../../../test/support/builders.ts';
import { MemorySource } from '../sources/memory-source.ts';
import { resolveParameters, type ResolvedParameters } from './parameters.ts';
import type { Problem } from '../shared/problem.ts';
import type {
  AccessDecision,
  ListRef,
  ObjectRef,
  ReadAccess,
  ReadFailure,
  SourcePort,
} from '../sources/source-port.ts';

/** A MemorySource that records every request and can be told to fail reads. */
class RecordingSource extends MemorySource {
  readonly requests: string[] = [];
  /** The reads the port depends on (and the operator would watch). */
  readonly watched: string[] = [];
  constructor(
    objects: KubeObject[],
    private readonly failWith?: ReadFailure,
  ) {
    super(objects);
  }
  override async get(
    ref: ObjectRef,
    shared?: (object: KubeObject) => boolean,
  ): ReturnType<SourcePort['get']> {
    const request = `get ${ref.kind} ${ref.namespace ?? ''}/${ref.name}`;
    this.requests.push(request);
    if (this.failWith)
      return { ok: false, failure: this.failWith, message: `read failed (${this.failWith})` };
    const read = await super.get(ref);
    if (!shared || (read.ok && shared(read.value))) this.watched.push(request);
    return read;
  }
  override list(ref: ListRef): ReturnType<SourcePort['list']> {
    this.requests.push(`list ${ref.kind} ${ref.namespace ?? '*'}`);
    return super.list(ref);
  }
}

interface Case {
  declarations: ParameterDeclaration[];
  overrides?: ParameterValue[];
  objects?: KubeObject[];
  spec?: Partial<TemplateSpec>;
  failWith?: ReadFailure;
}

async function resolve(
  c: Case,
): Promise<{ result: Awaited<ReturnType<typeof resolveParameters>>; source: RecordingSource }> {
  const source = new RecordingSource(c.objects ?? [], c.failWith);
  const result = await resolveParameters(
    aTemplate(c.declarations, c.spec),
    anInstance(c.overrides ?? []),
    source,
  );
  return { result, source };
}

async function values(c: Case): Promise<ResolvedParameters> {
  const { result } = await resolve(c);
  if (!result.ok) throw new Error(result.problems.map((p) => p.message).join('; '));
  return result.value;
}

async function problemOf(c: Case): Promise<Problem> {
  const { result } = await resolve(c);
  if (result.ok) throw new Error('expected a failure');
  return result.problems[0]!;
}

const secretRef = (name: string, key: string, namespace?: string): ParameterValue['valueFrom'] => ({
  secretKeyRef: { name, key, namespace },
});

describe('declarations, overrides and defaults (SPEC §3 steps 1-4)', () => {
  it('uses an override, else the Template default, else the empty value of the type', async () => {
    const resolved = await values({
      declarations: [
        { name: 'image', value: 'nginx:1.27' },
        { name: 'replicas', type: 'number', value: 2 },
        { name: 's', type: 'string' },
        { name: 'n', type: 'number' },
        { name: 'b', type: 'bool' },
        { name: 'a', type: 'array' },
        { name: 'o', type: 'object' },
        { name: 'untyped' },
      ],
      overrides: [{ name: 'image', value: 'ghcr.io/acme/shop:1.4.0' }],
    });
    expect(resolved.values).toEqual({
      image: 'ghcr.io/acme/shop:1.4.0',
      replicas: 2,
      s: '',
      n: '',
      b: '',
      a: [],
      o: {},
      untyped: '',
    });
  });

  it('ignores the Template default of a required parameter: the consumer must choose', async () => {
    expect(
      await problemOf({ declarations: [{ name: 'password', required: true, value: 'changeme' }] }),
    ).toMatchObject({
      reason: 'InvalidParameter',
      message: expect.stringContaining('parameter "password": is required'),
    });
  });

  it('refuses an override of a disableOverride parameter', async () => {
    expect(
      await problemOf({
        declarations: [{ name: 'tier', value: 'gold', disableOverride: true }],
        overrides: [{ name: 'tier', value: 'free' }],
      }),
    ).toMatchObject({
      reason: 'OverrideNotAllowed',
      path: 'parameters.tier',
    });
  });

  it('refuses an instance parameter the Template does not declare', async () => {
    expect(
      await problemOf({
        declarations: [{ name: 'image' }],
        overrides: [{ name: 'imag', value: 'x' }],
      }),
    ).toMatchObject({
      reason: 'InvalidParameter',
      message: expect.stringContaining(
        'parameter "imag": the Template "web-app" declares no such parameter',
      ),
    });
  });

  it('reports the first failing parameter in declaration order, whatever the reads return', async () => {
    const { result, source } = await resolve({
      declarations: [{ name: 'first', required: true }, { name: 'second' }, { name: 'third' }],
      overrides: [
        { name: 'second', valueFrom: secretRef('db', 'password') },
        { name: 'third', valueFrom: secretRef('missing', 'password') },
      ],
      objects: [aSecret('db', 'team-a', { password: 'x' })],
    });
    expect(!result.ok && result.problems.map((p) => p.path)).toEqual(['parameters.first']);
    // The sources are read together (one round trip), not one after another.
    expect(source.requests).toEqual(['get Secret team-a/db', 'get Secret team-a/missing']);
  });

  it('types values for the template: bool, number, array and object', async () => {
    const resolved = await values({
      declarations: [
        { name: 'tls', type: 'bool' },
        { name: 'replicas', type: 'number' },
        { name: 'hosts', type: 'array' },
        { name: 'resources', type: 'object' },
        { name: 'label', type: 'string' },
      ],
      overrides: [
        { name: 'tls', value: 'True' },
        { name: 'replicas', value: '3' },
        { name: 'hosts', value: '["a","b"]' },
        { name: 'resources', value: { cpu: '1' } },
        { name: 'label', value: 42 },
      ],
    });
    expect(resolved.values).toEqual({
      tls: true,
      replicas: 3,
      hosts: ['a', 'b'],
      resources: { cpu: '1' },
      label: '42',
    });
  });

  it.each([
    ['a number', 'number', 'three', 'expected a number, got "three"'],
    ['a bool', 'bool', 'yes', 'expected a boolean, got "yes"'],
    ['an array', 'array', 'a,b', 'expected an array'],
  ] as const)(
    'reports a type mismatch for %s with the parameter, type and value',
    async (_n, type, value, message) => {
      expect(
        await problemOf({ declarations: [{ name: 'p', type }], overrides: [{ name: 'p', value }] }),
      ).toMatchObject({
        reason: 'InvalidParameter',
        message: expect.stringContaining(message),
      });
    },
  );

  it('keeps prototype-pollution keys of object values as plain keys', async () => {
    const resolved = await values({
      declarations: [{ name: 'o', type: 'object' }, { name: '__proto__' }],
      overrides: [
        {
          name: 'o',
          value: '{"__proto__": {"polluted": 1}, "constructor": {"prototype": {"x": 1}}}',
        },
        { name: '__proto__', value: 'v' },
      ],
    });
    expect(Object.keys(resolved.values.o as object)).toEqual(['__proto__', 'constructor']);
    expect(Object.keys(resolved.values)).toEqual(['o', '__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('valueFrom sources', () => {
  const objects = [
    aSecret('db', 'team-a', { password: 's3cr3t', empty: '' }),
    aConfigMap(
      'settings',
      'team-a',
      { level: 'debug' },
      { cert: Buffer.from('-----BEGIN-----').toString('base64') },
    ),
    aService('web', 'team-a', { tier: 'frontend' }, '10.0.0.5'),
    aService('cart', 'team-a', { tier: 'backend' }),
    aService('catalog', 'team-b', { tier: 'backend' }),
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web-0', namespace: 'team-a' },
      status: {
        conditions: [
          { type: 'Initialized', status: 'True' },
          { type: 'Ready', status: 'False' },
        ],
      },
    } as KubeObject,
  ];
  const fields = (
    jsonPath: string,
    extra: Record<string, string> = {},
  ): ParameterValue['valueFrom'] => ({
    objectFieldRef: { apiVersion: 'v1', kind: 'Service', jsonPath, ...extra },
  });

  it('decodes a Secret key from base64', async () => {
    expect(
      (
        await values({
          declarations: [{ name: 'p' }],
          overrides: [{ name: 'p', valueFrom: secretRef('db', 'password') }],
          objects,
        })
      ).values.p,
    ).toBe('s3cr3t');
  });

  it('reads ConfigMap data, then binaryData decoded', async () => {
    const resolved = await values({
      declarations: [{ name: 'level' }, { name: 'cert' }],
      overrides: [
        { name: 'level', valueFrom: { configMapKeyRef: { name: 'settings', key: 'level' } } },
        { name: 'cert', valueFrom: { configMapKeyRef: { name: 'settings', key: 'cert' } } },
      ],
      objects,
    });
    expect(resolved.values).toEqual({ level: 'debug', cert: '-----BEGIN-----' });
  });

  it('GETs an object field, through a filter', async () => {
    const resolved = await values({
      declarations: [{ name: 'ip' }, { name: 'ready', type: 'bool' }],
      overrides: [
        { name: 'ip', valueFrom: fields('.spec.clusterIP', { name: 'web' }) },
        {
          name: 'ready',
          valueFrom: {
            objectFieldRef: {
              apiVersion: 'v1',
              kind: 'Pod',
              name: 'web-0',
              jsonPath: '.status.conditions[?(@.type=="Ready")].status',
            },
          },
        },
      ],
      objects,
    });
    expect(resolved.values).toEqual({ ip: '10.0.0.5', ready: false });
  });

  it('LIST mode always yields a list, even for a single match', async () => {
    const resolved = await values({
      declarations: [{ name: 'backends' }],
      overrides: [
        {
          name: 'backends',
          valueFrom: fields('.items[?(@.metadata.labels.tier=="backend")].metadata.name', {
            namespace: 'team-a',
          }),
        },
      ],
      objects,
    });
    expect(resolved.values.backends).toEqual(['cart']);
  });

  it.each([
    ['a missing Secret', secretRef('nope', 'password'), 'Secret team-a/nope not found'],
    ['a missing key', secretRef('db', 'nope'), 'key "nope" not found in Secret team-a/db'],
    [
      'a missing object',
      fields('.spec.clusterIP', { name: 'nope' }),
      'Service team-a/nope not found',
    ],
    ['a path that matches nothing', fields('.spec.nothing', { name: 'web' }), 'matched nothing'],
    [
      'a LIST with no match',
      fields('.items[?(@.metadata.labels.tier=="db")].metadata.name', { namespace: 'team-a' }),
      'matched nothing',
    ],
  ])('uses defaultValue on %s, and fails without one', async (_name, valueFrom, message) => {
    const withDefault = await values({
      declarations: [{ name: 'p' }],
      overrides: [{ name: 'p', valueFrom, defaultValue: 'fallback' }],
      objects,
    });
    expect(withDefault.values.p).toBe('fallback');
    expect(withDefault.defaultsUsed).toEqual([
      { name: 'p', failure: 'NotFound', message: expect.stringContaining(message) },
    ]);
    expect(withDefault.transientFallback).toBe(false);
    expect(
      await problemOf({
        declarations: [{ name: 'p' }],
        overrides: [{ name: 'p', valueFrom }],
        objects,
      }),
    ).toMatchObject({
      reason: 'ParameterResolutionFailed',
      message: expect.stringContaining(message),
    });
  });

  it('does not use defaultValue when the source resolves to an empty string', async () => {
    const resolved = await values({
      declarations: [{ name: 'p' }],
      overrides: [{ name: 'p', valueFrom: secretRef('db', 'empty'), defaultValue: 'fallback' }],
      objects,
    });
    expect(resolved.values.p).toBe('');
    expect(resolved.defaultsUsed).toEqual([]);
  });

  it('marks a fallback after a transient read failure, so the caller does not prune', async () => {
    const resolved = await values({
      declarations: [{ name: 'p' }],
      overrides: [{ name: 'p', valueFrom: secretRef('db', 'password'), defaultValue: 'fallback' }],
      objects,
      failWith: 'Transient',
    });
    expect(resolved).toMatchObject({ values: { p: 'fallback' }, transientFallback: true });
  });

  it('falls back when the kind is not served', async () => {
    const source = new RecordingSource(objects);
    source.scopeOf = () => Promise.resolve(undefined);
    const result = await resolveParameters(
      aTemplate([{ name: 'p' }]),
      anInstance([
        {
          name: 'p',
          valueFrom: {
            objectFieldRef: {
              apiVersion: 'example.com/v1',
              kind: 'Widget',
              name: 'w',
              jsonPath: '.spec',
            },
          },
          defaultValue: 'd',
        },
      ]),
      source,
    );
    expect(result.ok && result.value.defaultsUsed[0]).toMatchObject({
      failure: 'NotServed',
      message: expect.stringContaining('is not served'),
    });
  });
});

describe('the reference policy', () => {
  const objects = [
    aSecret('db', 'team-b', { password: 'x' }),
    aSecret('db', 'platform', { password: 'p' }),
    aService('catalog', 'team-b'),
  ];

  it('refuses another namespace without sending any request, even with a defaultValue', async () => {
    const { result, source } = await resolve({
      declarations: [{ name: 'p' }],
      overrides: [
        { name: 'p', valueFrom: secretRef('db', 'password', 'team-b'), defaultValue: 'd' },
      ],
      objects,
    });
    expect(!result.ok && result.problems[0]).toMatchObject({
      reason: 'ReferenceNotPermitted',
      message: expect.stringContaining('namespace "team-b"'),
    });
    expect(source.requests).toEqual([]);
  });

  it.each([
    ['a namespace in sourceNamespaces', 'team-b', ['team-b']],
    ['any namespace with "*"', 'team-b', ['*']],
  ])('permits %s', async (_name, namespace, sourceNamespaces) => {
    const resolved = await values({
      declarations: [{ name: 'p' }],
      overrides: [{ name: 'p', valueFrom: secretRef('db', 'password', namespace) }],
      objects,
      spec: sourceNamespaces ? { sourceNamespaces } : {},
    });
    expect(typeof resolved.values.p).toBe('string');
  });

  it('requires "*" to LIST a namespaced kind across all namespaces', async () => {
    const overrides = [
      {
        name: 'p',
        valueFrom: {
          objectFieldRef: {
            apiVersion: 'v1',
            kind: 'Service',
            jsonPath: '.items[*].metadata.name',
          },
        },
      },
    ];
    const { result, source } = await resolve({
      declarations: [{ name: 'p' }],
      overrides,
      objects,
      spec: { sourceNamespaces: ['team-b'] },
    });
    expect(!result.ok && result.problems[0]?.reason).toBe('ReferenceNotPermitted');
    expect(source.requests).toEqual([]);
    expect(
      (
        await values({
          declarations: [{ name: 'p' }],
          overrides,
          objects,
          spec: { sourceNamespaces: ['*'] },
        })
      ).values.p,
    ).toEqual(['catalog']);
  });
});

describe("reads from the Template's own namespace (spec.sources)", () => {
  const labelled = (name: string, labels: Record<string, string>): KubeObject => {
    const secret = aSecret(name, 'platform', { password: `${name}-value` });
    return { ...secret, metadata: { ...secret.metadata, labels } };
  };
  const objects = [
    aSecret('platform-admin', 'platform', { password: 'admin-value' }),
    aSecret('shared-ca', 'platform', { password: 'ca-value' }),
    labelled('public-a', { 'stencil.dev/shared': 'true' }),
    labelled('private-b', { 'stencil.dev/shared': 'false' }),
    aConfigMap('defaults', 'platform', { level: 'info' }),
  ];
  const secretIn = (name: string): ParameterValue['valueFrom'] =>
    secretRef(name, 'password', 'platform');
  const field = (name?: string): ParameterValue['valueFrom'] => ({
    objectFieldRef: {
      apiVersion: 'v1',
      kind: 'Secret',
      namespace: 'platform',
      jsonPath: name ? '.data.password' : '.items[*].metadata.name',
      ...(name ? { name } : {}),
    },
  });
  const shared = { kind: 'Secret', selector: { matchLabels: { 'stencil.dev/shared': 'true' } } };

  it.each([
    [
      'a Secret the Template does not list, with no spec.sources',
      secretIn('platform-admin'),
      {},
      [],
    ],
    [
      'a Secret whose name is not the listed one',
      secretIn('platform-admin'),
      { sources: [{ kind: 'Secret', name: 'shared-ca' }] },
      [],
    ],
    [
      'a Secret listed only as a ConfigMap of that name',
      secretIn('shared-ca'),
      { sources: [{ kind: 'ConfigMap', name: 'shared-ca' }] },
      [],
    ],
    [
      'a Secret of the Template namespace although sourceNamespaces names that namespace',
      secretIn('platform-admin'),
      { sourceNamespaces: ['platform'] },
      [],
    ],
    [
      'a Secret of the Template namespace although sourceNamespaces is "*"',
      secretIn('platform-admin'),
      { sourceNamespaces: ['*'] },
      [],
    ],
    [
      'an objectFieldRef of a Secret the Template does not list',
      field('platform-admin'),
      { sources: [{ kind: 'Secret', name: 'shared-ca' }] },
      [],
    ],
    [
      'a Secret whose labels the listed selector does not match (read, then refused)',
      secretIn('private-b'),
      { sources: [shared] },
      ['get Secret platform/private-b'],
    ],
    [
      'a LIST of Secrets in the Template namespace without a selector entry',
      field(),
      { sources: [{ kind: 'Secret', name: 'shared-ca' }] },
      [],
    ],
  ])('refuses %s, naming the object and spec.sources', async (_name, valueFrom, spec, sent) => {
    const { result, source } = await resolve({
      declarations: [{ name: 'p' }],
      overrides: [{ name: 'p', valueFrom, defaultValue: 'fallback' }],
      objects,
      spec,
    });
    expect(!result.ok && result.problems[0]).toMatchObject({
      reason: 'ReferenceNotPermitted',
      message: expect.stringMatching(/Template "platform\/web-app".*spec\.sources/),
    });
    expect(JSON.stringify(result)).not.toMatch(/-value/);
    expect(source.requests).toEqual(sent);
  });

  it.each([
    [
      'a Secret listed by name',
      secretIn('shared-ca'),
      [{ kind: 'Secret', name: 'shared-ca' }],
      'ca-value',
    ],
    ['a Secret its selector matches', secretIn('public-a'), [shared], 'public-a-value'],
    [
      'a ConfigMap listed by name, with apiVersion v1 spelled out',
      { configMapKeyRef: { name: 'defaults', key: 'level', namespace: 'platform' } },
      [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'defaults' }],
      'info',
    ],
  ])('reads %s', async (_name, valueFrom, sources, expected) => {
    const resolved = await values({
      declarations: [{ name: 'p' }],
      overrides: [{ name: 'p', valueFrom }],
      objects,
      spec: { sources },
    });
    expect(resolved.values.p).toBe(expected);
  });

  it('marks a JSONPath matching more than the limit as settled (it waits for its source)', async () => {
    const many = Array.from({ length: 10_001 }, (_, i) => i);
    const source = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'big', namespace: 'team-a' },
      data: { v: 'x' },
      spec: { many },
    };
    const problem = await problemOf({
      declarations: [{ name: 'p', type: 'array' }],
      overrides: [
        {
          name: 'p',
          valueFrom: {
            objectFieldRef: {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              name: 'big',
              jsonPath: '.spec.many[*]',
            },
          },
        },
      ],
      objects: [source],
    });
    expect(problem).toMatchObject({
      reason: 'ParameterResolutionFailed',
      settled: true,
      message: expect.stringContaining('more than 10000 values'),
    });
  });

  it('refuses a missing and an unshared Secret alike, and depends on neither', async () => {
    const refusal = async (name: string): Promise<{ message: string; watched: string[] }> => {
      const { result, source } = await resolve({
        declarations: [{ name: 'p' }],
        overrides: [{ name: 'p', valueFrom: secretIn(name) }],
        objects,
        spec: { sources: [shared] },
      });
      const problem = !result.ok ? result.problems[0]! : undefined;
      expect(problem?.reason).toBe('ReferenceNotPermitted');
      return { message: problem!.message.replaceAll(name, '<name>'), watched: source.watched };
    };
    const unshared = await refusal('private-b');
    const missing = await refusal('no-such-secret');
    expect(missing).toEqual(unshared);
    expect(unshared.watched).toEqual([]);
    const { source } = await resolve({
      declarations: [{ name: 'p' }],
      overrides: [{ name: 'p', valueFrom: secretIn('public-a') }],
      objects,
      spec: { sources: [shared] },
    });
    expect(source.watched).toEqual(['get Secret platform/public-a']);
  });

  it('lists only the objects a selector entry matches', async () => {
    const resolved = await values({
      declarations: [{ name: 'p', type: 'array' }],
      overrides: [{ name: 'p', valueFrom: field() }],
      objects,
      spec: { sources: [shared] },
    });
    expect(resolved.values.p).toEqual(['public-a']);
  });

  it('drops unlisted Template-namespace objects from a list across all namespaces', async () => {
    const resolved = await values({
      declarations: [{ name: 'p', type: 'array' }],
      overrides: [
        {
          name: 'p',
          valueFrom: {
            objectFieldRef: {
              apiVersion: 'v1',
              kind: 'Secret',
              jsonPath: '.items[*].metadata.name',
            },
          },
        },
      ],
      objects: [...objects, aSecret('mine', 'team-a', { password: 'm' })],
      spec: { sourceNamespaces: ['*'], sources: [{ kind: 'Secret', name: 'shared-ca' }] },
    });
    expect(resolved.values.p).toEqual(expect.arrayContaining(['shared-ca', 'mine']));
    expect(resolved.values.p).toHaveLength(2);
  });

  it("reads anything of an instance's own namespace when the Template lives there too", async () => {
    const { result } = await (async () => {
      const source = new RecordingSource(objects);
      const instance = anInstance(
        [{ name: 'p', valueFrom: secretIn('platform-admin') }],
        'platform',
      );
      return { result: await resolveParameters(aTemplate([{ name: 'p' }]), instance, source) };
    })();
    expect(result.ok && result.value.values.p).toBe('admin-value');
  });
});

describe('bytes stay bytes (encoding)', () => {
  // A keystore-like value: a magic number and bytes that are no UTF-8 text.
  const keystore = Buffer.from([0xfe, 0xed, 0xfe, 0xed, 0x00, 0x02, 0xff, 0xfe, 0x80, 0x41]);
  const objects: KubeObject[] = [
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'tls', namespace: 'team-a' },
      data: {
        'keystore.jks': keystore.toString('base64'),
        note: Buffer.from('héllo').toString('base64'),
      },
    },
    aConfigMap('bin', 'team-a', { text: 'plain' }, { blob: keystore.toString('base64') }),
  ];
  const secretKey = (key: string): ParameterValue['valueFrom'] => secretRef('tls', key);

  it.each([
    ['a Secret key', secretKey('keystore.jks')],
    ['a ConfigMap binaryData key', { configMapKeyRef: { name: 'bin', key: 'blob' } }],
  ])(
    'refuses %s that is not UTF-8, naming the parameter and encoding: base64',
    async (_n, valueFrom) => {
      const problem = await problemOf({
        declarations: [{ name: 'ks' }],
        overrides: [{ name: 'ks', valueFrom, defaultValue: 'fallback' }],
        objects,
      });
      expect(problem).toMatchObject({
        path: 'parameters.ks',
        reason: 'ParameterResolutionFailed',
        message: expect.stringMatching(
          /^parameter "ks": .*not UTF-8 text; declare encoding: base64/,
        ),
      });
      expect(problem.message).not.toContain(keystore.toString('base64'));
      expect(problem.message).not.toContain('\ufffd');
    },
  );

  it.each([
    ['a Secret key', secretKey('keystore.jks'), keystore],
    ['a Secret key that is text', secretKey('note'), Buffer.from('héllo')],
    ['a ConfigMap binaryData key', { configMapKeyRef: { name: 'bin', key: 'blob' } }, keystore],
    [
      'a ConfigMap data key',
      { configMapKeyRef: { name: 'bin', key: 'text' } },
      Buffer.from('plain'),
    ],
  ])(
    'gives %s as the base64 of its exact bytes with encoding: base64',
    async (_n, valueFrom, bytes) => {
      const resolved = await values({
        declarations: [{ name: 'ks', type: 'string', encoding: 'base64' }],
        overrides: [{ name: 'ks', valueFrom }],
        objects,
      });
      expect(Buffer.from(resolved.values.ks as string, 'base64').equals(bytes)).toBe(true);
    },
  );

  it('still decodes a UTF-8 Secret value exactly without encoding', async () => {
    const resolved = await values({
      declarations: [{ name: 'n' }],
      overrides: [{ name: 'n', valueFrom: secretKey('note') }],
      objects,
    });
    expect(resolved.values.n).toBe('héllo');
  });
});

describe('Secret values stay secret', () => {
  it('never quotes a Secret value that fails its type', async () => {
    const problem = await problemOf({
      declarations: [{ name: 'port', type: 'number' }],
      overrides: [{ name: 'port', valueFrom: secretRef('db', 'password') }],
      objects: [aSecret('db', 'team-a', { password: 'hunter2-not-a-number' })],
    });
    expect(problem.reason).toBe('InvalidParameter');
    expect(JSON.stringify(problem)).not.toContain('hunter2');
  });

  it('exposes values in status only for exposeInStatus parameters, and never a Secret value', async () => {
    const resolved = await values({
      declarations: [
        { name: 'image', exposeInStatus: true },
        { name: 'password', exposeInStatus: true },
        { name: 'hidden' },
      ],
      overrides: [
        { name: 'image', value: 'nginx' },
        { name: 'password', valueFrom: secretRef('db', 'password') },
        { name: 'hidden', value: 'h' },
      ],
      objects: [aSecret('db', 'team-a', { password: 'hunter2' })],
    });
    expect(resolved.status).toEqual([
      { name: 'image', value: 'nginx' },
      { name: 'password', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } },
      { name: 'hidden' },
    ]);
    expect(JSON.stringify(resolved.status)).not.toContain('hunter2');
  });
});

describe('merge with the Template default (ADR 0013)', () => {
  const limits = { cpu: '1', memory: '1Gi' };

  it('merges an instance value deep with the default and shows the result in status', async () => {
    const resolved = await values({
      declarations: [
        {
          name: 'resources',
          type: 'object',
          merge: 'deep',
          exposeInStatus: true,
          value: { limits, requests: { cpu: '100m' } },
        },
      ],
      overrides: [{ name: 'resources', value: { limits: { memory: '2Gi' } } }],
    });
    const expected = { limits: { cpu: '1', memory: '2Gi' }, requests: { cpu: '100m' } };
    expect(resolved.values.resources).toEqual(expected);
    expect(resolved.status).toEqual([{ name: 'resources', value: expected }]);
  });

  it('merges a JSON string from a ConfigMap once it is typed, and the defaultValue alike', async () => {
    const declarations: ParameterDeclaration[] = [
      {
        name: 'ports',
        type: 'array',
        merge: 'union-by-key',
        mergeKey: 'name',
        value: [{ name: 'http', port: 80 }],
      },
    ];
    const fromMap = await values({
      declarations,
      overrides: [{ name: 'ports', valueFrom: { configMapKeyRef: { name: 'net', key: 'ports' } } }],
      objects: [
        aConfigMap('net', 'team-a', {
          ports: '[{"name":"http","port":8080},{"name":"grpc","port":9000}]',
        }),
      ],
    });
    expect(fromMap.values.ports).toEqual([
      { name: 'http', port: 8080 },
      { name: 'grpc', port: 9000 },
    ]);
    const fallback = await values({
      declarations,
      overrides: [
        {
          name: 'ports',
          valueFrom: { configMapKeyRef: { name: 'missing', key: 'ports' } },
          defaultValue: '[{"name":"admin","port":9001}]',
        },
      ],
    });
    expect(fallback.values.ports).toEqual([
      { name: 'http', port: 80 },
      { name: 'admin', port: 9001 },
    ]);
  });

  it('uses the default unchanged without an override, and the override alone for replace', async () => {
    const resolved = await values({
      declarations: [
        { name: 'a', type: 'object', merge: 'deep', value: { x: 1 } },
        { name: 'b', type: 'object', merge: 'replace', value: { x: 1 } },
        { name: 'c', type: 'object', value: { x: 1 } },
      ],
      overrides: [
        { name: 'b', value: { y: 2 } },
        { name: 'c', value: { y: 2 } },
      ],
    });
    expect(resolved.values).toEqual({ a: { x: 1 }, b: { y: 2 }, c: { y: 2 } });
  });

  it('still refuses any override of a disableOverride parameter, even a merging one', async () => {
    const problem = await problemOf({
      declarations: [
        { name: 'o', type: 'object', merge: 'deep', disableOverride: true, value: { x: 1 } },
      ],
      overrides: [{ name: 'o', value: { y: 2 } }],
    });
    expect(problem.reason).toBe('OverrideNotAllowed');
  });

  it('treats a merged value with Secret-derived parts as Secret-backed', async () => {
    const resolved = await values({
      declarations: [
        {
          name: 'db',
          type: 'object',
          merge: 'deep',
          exposeInStatus: true,
          value: { host: 'db.local' },
        },
      ],
      overrides: [{ name: 'db', valueFrom: secretRef('db', 'json') }],
      objects: [aSecret('db', 'team-a', { json: '{"password":"hunter2-merged"}' })],
    });
    expect(resolved.values.db).toEqual({ host: 'db.local', password: 'hunter2-merged' });
    expect(resolved.status).toEqual([
      { name: 'db', valueFrom: { secretKeyRef: { name: 'db', key: 'json' } } },
    ]);
    expect(resolved.redactor.redact('pw=hunter2-merged host=db.local')).toBe(
      'pw=[redacted: parameters.db] host=db.local',
    );
  });

  it('refuses an instance list item without the merge key, naming the parameter', async () => {
    const problem = await problemOf({
      declarations: [
        { name: 'ports', type: 'array', merge: 'union-by-key', mergeKey: 'name', value: [] },
      ],
      overrides: [{ name: 'ports', value: [{ port: 1 }] }],
    });
    expect(problem).toMatchObject({
      path: 'parameters.ports',
      reason: 'InvalidParameter',
      message: expect.stringContaining('parameter "ports": cannot merge (union-by-key)'),
    });
  });
});

describe('reads on behalf of the requester (--authorize-sources=requester, ADR 0020)', () => {
  /** A source whose authorize allows only the reads listed, and records what it was asked. */
  class AuthorizingSource extends RecordingSource {
    readonly asked: string[] = [];
    constructor(
      objects: KubeObject[],
      private readonly allowed: string[],
    ) {
      super(objects);
    }
    authorize(access: ReadAccess): Promise<AccessDecision> {
      const key = `${access.verb} ${access.kind} ${access.namespace ?? '*'}/${access.name ?? ''}`;
      this.asked.push(key);
      return Promise.resolve(
        this.allowed.includes(key)
          ? { allowed: true }
          : { allowed: false, message: `user "alice" may not ${key}` },
      );
    }
  }
  const objects = [
    aSecret('db', 'team-a', { password: 'S3CRET-VALUE' }),
    aConfigMap('cfg', 'team-a', { level: 'debug' }),
    aService('web', 'team-a'),
  ];
  const fieldRef = (name?: string): ParameterValue['valueFrom'] => ({
    objectFieldRef: {
      apiVersion: 'v1',
      kind: 'Service',
      ...(name ? { name } : {}),
      jsonPath: name ? '.metadata.name' : '.items[*].metadata.name',
    },
  });

  it.each([
    ['a Secret key', secretRef('db', 'password'), 'get Secret team-a/db'],
    [
      'a ConfigMap key',
      { configMapKeyRef: { name: 'cfg', key: 'level' } },
      'get ConfigMap team-a/cfg',
    ],
    ['an object by name', fieldRef('web'), 'get Service team-a/web'],
    [
      'a list',
      { objectFieldRef: { ...fieldRef()!.objectFieldRef!, namespace: 'team-a' } },
      'list Service team-a/',
    ],
  ] as [string, ParameterValue['valueFrom'], string][])(
    '%s is asked for first: allowed it is read, denied nothing is read and no default stands in',
    async (_name, valueFrom, access) => {
      const allowed = new AuthorizingSource(objects, [access]);
      const type = access.startsWith('list') ? 'array' : 'string';
      const granted = await resolveParameters(
        aTemplate([{ name: 'p', type }]),
        anInstance([{ name: 'p', valueFrom }]),
        allowed,
      );
      expect(granted.ok).toBe(true);
      expect(allowed.asked).toEqual([access]);

      const denied = new AuthorizingSource(objects, []);
      const refused = await resolveParameters(
        aTemplate([{ name: 'p', type: 'string' }]),
        anInstance([{ name: 'p', valueFrom, defaultValue: 'fallback' }]),
        denied,
      );
      expect(!refused.ok && refused.problems[0]).toEqual({
        path: 'parameters.p',
        reason: 'SourceNotAuthorized',
        message: `parameter "p": user "alice" may not ${access}`,
      });
      expect(denied.requests).toEqual([]);
    },
  );

  it('asks nothing of a read the Template policy refuses already', async () => {
    const source = new AuthorizingSource(objects, []);
    const result = await resolveParameters(
      aTemplate([{ name: 'p' }]),
      anInstance([{ name: 'p', valueFrom: secretRef('db', 'password', 'team-b') }]),
      source,
    );
    expect(!result.ok && result.problems[0]?.reason).toBe('ReferenceNotPermitted');
    expect(source.asked).toEqual([]);
  });
});
