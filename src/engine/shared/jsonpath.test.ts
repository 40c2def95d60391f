// Tables for evaluateJsonPath: kubectl-style paths over a real LIST and GET object, our filter
// subset, own-property-only lookups, rejected syntax (with exact messages) and the limits.
import { JSONPath } from 'jsonpath-plus';
import { afterEach, describe, expect, it } from 'vitest';
import {
  evaluateJsonPath,
  MAX_JSONPATH_LENGTH,
  MAX_JSONPATH_MATCHES,
  MAX_LIBRARY_CACHE_ENTRIES,
} from './jsonpath.ts';

const SERVICE_LIST = {
  apiVersion: 'v1',
  kind: 'ServiceList',
  metadata: { resourceVersion: '4711' },
  items: [
    {
      metadata: {
        name: 'api',
        namespace: 'team-a',
        labels: { 'app.kubernetes.io/name': 'shop', tier: 'back' },
      },
      spec: { type: 'ClusterIP', clusterIP: '10.96.0.10', ports: [{ name: 'http', port: 8080 }] },
      status: { loadBalancer: {} },
    },
    {
      metadata: {
        name: 'web',
        namespace: 'team-a',
        labels: { 'app.kubernetes.io/name': 'shop', tier: 'front' },
        annotations: { owner: null },
      },
      spec: {
        type: 'LoadBalancer',
        clusterIP: '10.96.0.11',
        ports: [
          { name: 'http', port: 80 },
          { name: 'https', port: 443 },
        ],
      },
      status: { loadBalancer: { ingress: [{ ip: '203.0.113.10' }, { ip: '203.0.113.11' }] } },
    },
    {
      metadata: { name: 'db', namespace: 'team-b' },
      spec: { type: 'ClusterIP', clusterIP: 'None', ports: [{ name: 'pg', port: 5432 }] },
      status: { loadBalancer: {} },
    },
  ],
};

const POD = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'shop-0',
    namespace: 'team-a',
    labels: { 'app.kubernetes.io/name': 'shop', 'statefulset.kubernetes.io/pod-name': 'shop-0' },
  },
  spec: {
    containers: [
      {
        name: 'app',
        image: 'ghcr.io/acme/shop:1.4.0',
        args: ['--port=8080', '--debug'],
        ports: [{ containerPort: 8080 }],
      },
      { name: 'proxy', image: 'envoyproxy/envoy:v1.31', ports: [{ containerPort: 9901 }] },
    ],
  },
  status: {
    phase: 'Running',
    podIP: '10.244.1.7',
    conditions: [
      { type: 'Initialized', status: 'True' },
      { type: 'Ready', status: 'True' },
      { type: 'ContainersReady', status: 'True' },
      { type: 'PodScheduled', status: 'True' },
    ],
    containerStatuses: [
      { name: 'app', ready: true, restartCount: 0 },
      { name: 'proxy', ready: false, restartCount: 3 },
    ],
  },
};

function values(path: string, root: unknown): unknown {
  const outcome = evaluateJsonPath(path, root);
  return outcome.ok ? outcome.value : outcome.problems;
}

describe('evaluateJsonPath over a LIST object returns every match in document order', () => {
  it.each<[string, unknown[]]>([
    ['.kind', ['ServiceList']],
    ['.items[*].metadata.name', ['api', 'web', 'db']],
    ['.items.*.metadata.name', ['api', 'web', 'db']],
    ['.items[*].spec.ports[*].port', [8080, 80, 443, 5432]],
    ['.items[*].status.loadBalancer.ingress[0].ip', ['203.0.113.10']],
    ['.items[*].status.loadBalancer.ingress[*].ip', ['203.0.113.10', '203.0.113.11']],
    ['.items[0].metadata.name', ['api']],
    ['.items[2].metadata.name', ['db']],
    ['.items[3].metadata.name', []],
    ['.items[-1].metadata.name', ['db']],
    ['.items[-3].metadata.name', ['api']],
    ['.items[-4].metadata.name', []],
    ['.items[0:2].metadata.name', ['api', 'web']],
    ['.items[1:].metadata.name', ['web', 'db']],
    ['.items[:1].metadata.name', ['api']],
    ['.items[-2:].metadata.name', ['web', 'db']],
    ['.items[::2].metadata.name', ['api', 'db']],
    ['.items[0:10].metadata.name', ['api', 'web', 'db']],
    ['.items[0:0].metadata.name', []],
    ['.items[2:1].metadata.name', []],
    ['.items[*].metadata.labels.app\\.kubernetes\\.io/name', ['shop', 'shop']],
    [".items[*].metadata.labels['app.kubernetes.io/name']", ['shop', 'shop']],
    ['.items[*].metadata.labels["app.kubernetes.io/name"]', ['shop', 'shop']],
    ['.items[?(@.spec.type=="LoadBalancer")].status.loadBalancer.ingress[0].ip', ['203.0.113.10']],
    [".items[?(@.spec.type == 'ClusterIP')].metadata.name", ['api', 'db']],
    ['.items[?(@.spec.type != "ClusterIP")].metadata.name', ['web']],
    ['.items[?(@.metadata.labels.tier)].metadata.name', ['api', 'web']],
    ['.items[?(@.metadata.labels.tier == "front")].metadata.name', ['web']],
    ['.items[?(@.metadata.labels.tier != "front")].metadata.name', ['api']],
    ['.items[?(@.spec.ports[0].port > 1000)].metadata.name', ['api', 'db']],
    ['.items[?(@.spec.ports[0].port <= 80)].metadata.name', ['web']],
    ['.items[?(@.spec.ports[-1].port >= 443)].metadata.name', ['api', 'web', 'db']],
    ['.items[?(@.spec.ports[1].port < 1000)].metadata.name', ['web']],
    ['.items[?(@.metadata.annotations.owner == null)].metadata.name', ['web']],
    ['.items[?(@.metadata.annotations.owner)].metadata.name', ['web']],
    ['.items[*].spec.ports[?(@.name == "https")].port', [443]],
    ['..port', [8080, 80, 443, 5432]],
    ['..ports[0].port', [8080, 80, 5432]],
    ['..ingress[*].ip', ['203.0.113.10', '203.0.113.11']],
    ['..[?(@.name == "http")].port', [8080, 80]],
    ['.items[*].metadata.missing', []],
    ['.items[*].spec.ports.port', []],
  ])('%s selects %j', (path, expected) => {
    expect(values(path, SERVICE_LIST)).toEqual(expected);
  });
});

describe('evaluateJsonPath over a GET object', () => {
  it.each<[string, unknown[]]>([
    ['.status.podIP', ['10.244.1.7']],
    ['.status.conditions[?(@.type=="Ready")].status', ['True']],
    [".status.conditions[?(@.type=='Ready')].status", ['True']],
    ['.status.conditions[?( @.type == "Ready" )].status', ['True']],
    ['.status.conditions[?(@.type=="Unknown")].status', []],
    ['.status.conditions[?(@.status != "True")].type', []],
    ['.status.containerStatuses[?(@.ready == false)].name', ['proxy']],
    ['.status.containerStatuses[?(@.ready == true)].name', ['app']],
    ['.status.containerStatuses[?(@.ready)].name', ['app', 'proxy']],
    ['.status.containerStatuses[?(@.restartCount >= 1)].name', ['proxy']],
    ['.status.containerStatuses[?(@.restartCount == 0)].name', ['app']],
    ['.status.containerStatuses[?(@.restartCount == 0.0)].name', ['app']],
    ['.status.containerStatuses[?(@.restartCount > -1e0)].name', ['app', 'proxy']],
    ['.spec.containers[0].image', ['ghcr.io/acme/shop:1.4.0']],
    ['.spec.containers[*].ports[*].containerPort', [8080, 9901]],
    ['.spec.containers[0].args[?(@ == "--debug")]', ['--debug']],
    ['.spec.containers[?(@.args[1] == "--debug")].name', ['app']],
    ['.spec.containers[?(@.args)].name', ['app']],
    ['.metadata.labels.app\\.kubernetes\\.io/name', ['shop']],
    ['.metadata.labels["statefulset.kubernetes.io/pod-name"]', ['shop-0']],
    ['.metadata.labels[?(@ == "shop")]', ['shop']],
    ['.metadata.labels.*', ['shop', 'shop-0']],
    ['.metadata.labels[*]', ['shop', 'shop-0']],
    ['..image', ['ghcr.io/acme/shop:1.4.0', 'envoyproxy/envoy:v1.31']],
    ['..[?(@.type=="Ready")].status', ['True']],
    [".['kind']", ['Pod']],
    ['.[*]', ['v1', 'Pod', POD.metadata, POD.spec, POD.status]],
  ])('%s selects %j', (path, expected) => {
    expect(values(path, POD)).toEqual(expected);
  });

  it('. alone selects the whole object, the same reference', () => {
    const outcome = evaluateJsonPath('.', POD);
    expect(outcome).toEqual({ ok: true, value: [POD] });
    expect(outcome.ok && outcome.value[0]).toBe(POD);
  });

  it('a selected map is the object inside the root, not a copy', () => {
    const outcome = evaluateJsonPath('.spec.containers[1]', POD);
    expect(outcome.ok && outcome.value[0]).toBe(POD.spec.containers[1]);
  });
});

describe('evaluateJsonPath follows kubectl semantics at the edges', () => {
  const doc = {
    name: 'root',
    a: { name: 'a', b: { name: 'ab' } },
    list: [{ name: 'l0' }, [{ name: 'nested' }]],
    mapWithIndexKeys: { '0': 'zero', '-1': 'minus one' },
    items: [{ v: 'x' }, { v: 2 }, {}, { v: null }, { v: { deep: 1 } }, { v: [1] }, { v: 'y' }],
    text: 'abc',
    strings: [{ s: '\u{1F600}' }, { s: '\uFF21' }, { s: 'a' }],
  };

  it.each<[string, string, unknown[]]>([
    [
      'recursive descent visits a node before its descendants',
      '..name',
      ['root', 'a', 'ab', 'l0', 'nested'],
    ],
    ['a filter on items lacking the field skips them', '.items[?(@.v.w == 1)]', []],
    [
      'an existence filter keeps present fields, null included',
      '.items[?(@.v)].v',
      ['x', 2, null, { deep: 1 }, [1], 'y'],
    ],
    ['!= skips items lacking the field', '.items[?(@.v != "x")].v', [2, null, 'y']],
    ['== does not convert types', '.items[?(@.v == "2")].v', []],
    ['== compares numbers', '.items[?(@.v == 2)].v', [2]],
    ['a list or map never equals a literal', '.items[?(@.v == null)].v', [null]],
    ['< compares strings with strings', '.items[?(@.v < "y")].v', ['x']],
    ['> never matches a number against a string', '.items[?(@.v > "a")].v', ['x', 'y']],
    ['strings order by code point, as in Go', '.strings[?(@.s > "\uFF21")].s', ['\u{1F600}']],
    ['an index applies to lists only', '.mapWithIndexKeys[0]', []],
    ['a negative index applies to lists only', '.mapWithIndexKeys[-1]', []],
    [
      'a quoted key still reaches a map key that looks like an index',
      ".mapWithIndexKeys['0']",
      ['zero'],
    ],
    ['a name never reaches the length of a string', '.text.length', []],
    ['a name never reaches the length of a list', '.items.length', []],
    ['an index never reaches into a string', '.text[0]', []],
    ['a wildcard on a string selects nothing', '.text[*]', []],
    ['a filter on a scalar selects nothing', '.text[?(@)]', []],
    ['a filter over a map visits its values', '.a[?(@.name == "ab")].name', ['ab']],
  ])('%s: %s', (_name, path, expected) => {
    expect(values(path, doc)).toEqual(expected);
  });

  it.each<[string, unknown]>([
    ['a string', 'text'],
    ['null', null],
    ['undefined', undefined],
    ['a number', 0],
  ])('a path into %s as the root selects nothing', (_name, root) => {
    expect(values('.a', root)).toEqual([]);
  });
});

describe('evaluateJsonPath matches own properties only', () => {
  const doc = JSON.parse(
    '{"plain":{"a":1},"own":{"__proto__":{"p":1},"constructor":{"c":2},"prototype":{"t":3}},' +
      '"odd":{"a,b":1,"it\'s":2,"#0":3,"^":4,"~":5,"@string()":6,"*":7,"":8,"a]b":9,"x;y":10,' +
      '"..":11,"$":12,"sp ace":13,"`tick":14,"%@%":15,"0:1":16}}',
  ) as unknown;

  it.each<[string, unknown[]]>([
    ['.plain.constructor', []],
    ['.plain.__proto__', []],
    ['.plain.prototype', []],
    ['.plain.toString', []],
    ['.plain.hasOwnProperty', []],
    ['.plain.a.constructor', []],
    ['.plain.a.constructor.name', []],
    ["..['constructor']", [{ c: 2 }]],
    ['..__proto__.p', [1]],
    ['.own.__proto__', [{ p: 1 }]],
    ['.own.constructor', [{ c: 2 }]],
    ['.own.prototype.t', [3]],
    [".own['__proto__'].p", [1]],
    ['.own[?(@.c == 2)].c', [2]],
    ['.own[?(@.constructor)]', []],
    [".odd['a,b']", [1]],
    [".odd['it\\'s']", [2]],
    ['.odd["it\'s"]', [2]],
    [".odd['#0']", [3]],
    [".odd['^']", [4]],
    [".odd['~']", [5]],
    [".odd['@string()']", [6]],
    [".odd['*']", [7]],
    [".odd['']", [8]],
    [".odd['a]b']", [9]],
    [".odd['x;y']", [10]],
    [".odd['..']", [11]],
    [".odd['$']", [12]],
    [".odd['sp ace']", [13]],
    [".odd['`tick']", [14]],
    [".odd['%@%']", [15]],
    [".odd['0:1']", [16]],
    ['.odd.~', [5]],
    ['.odd.$', [12]],
    [".odd['missing,a,b']", []],
    [".odd['constructor(\\'globalThis.pwned=1\\')']", []],
  ])('%s selects %j', (path, expected) => {
    expect(values(path, doc)).toEqual(expected);
  });

  const inheriting = Object.create({ plain: 'inherited', 'a,b': 'inherited', 'x y': 'inherited' });
  it.each<[string]>([['.plain'], [".['a,b']"], [".['x y']"], ['.[?(@ == "inherited")]']])(
    'an inherited property is never matched: %s',
    (path) => {
      expect(values(path, inheriting)).toEqual([]);
    },
  );
});

const FILTER_HELP =
  'filters support only [?(@.field)] (the field exists) and [?(@.field OP literal)] with OP one ' +
  'of ==, !=, <, <=, >, >= and a quoted string, number, true, false or null';
const BRACES =
  'JSONPath must not be wrapped in {}: give .status.podIP, not {.status.podIP}; kubectl ' +
  'templates ({range}...{end}, several {} blocks, literal text) are not supported';

function filterError(at: number, near: string, found: string): string {
  return `invalid JSONPath at character ${at} (near ${JSON.stringify(near)}): unsupported filter syntax: unexpected ${found}; ${FILTER_HELP}`;
}

describe('evaluateJsonPath rejects what it does not support, with a clear message', () => {
  afterEach(() => {
    delete (globalThis as Record<string, unknown>).pwned;
  });

  it.each<[string, string]>([
    ['', 'JSONPath must start with "." (kubectl style, e.g. .status.podIP), got ""'],
    [
      'status.podIP',
      'JSONPath must start with "." (kubectl style, e.g. .status.podIP), got "status.podIP"',
    ],
    [
      '$.status.podIP',
      'JSONPath must start with "." (kubectl style, e.g. .status.podIP), got "$.status.podIP"',
    ],
    [' .a', 'JSONPath must start with "." (kubectl style, e.g. .status.podIP), got " .a"'],
    ['{.status.podIP}', BRACES],
    ['{range .items[*]}{.metadata.name}{"\\n"}{end}', BRACES],
    [' {.a}', BRACES],
    [
      '.a{.b}',
      'invalid JSONPath at character 3 (near "{.b}"): braces are kubectl template syntax; give the bare path (the operator wraps it)',
    ],
    [
      '.a}',
      'invalid JSONPath at character 3 (near "}"): braces are kubectl template syntax; give the bare path (the operator wraps it)',
    ],
    [
      '.a[(@.length-1)]',
      'invalid JSONPath at character 4 (near "(@.length-1)]"): script expressions [(...)] are not supported',
    ],
    [
      '.a.b()',
      'invalid JSONPath at character 5 (near "()"): function calls and script expressions are not supported',
    ],
    ['.a[?(@.x && @.y)]', filterError(10, '&& @.y)]', '"&"')],
    ['.a[?(@.x || @.y)]', filterError(10, '|| @.y)]', '"|"')],
    ['.a[?(@.x.y())]', filterError(11, '())]', '"("')],
    ['.a[?(@.x == @.y)]', filterError(13, '@.y)]', '"@"')],
    ['.a[?("x" == @.y)]', filterError(6, '"x" == @.y)]', '"\\""')],
    ['.a[?(!@.x)]', filterError(6, '!@.x)]', '"!"')],
    ['.a[?(@.x =~ /y/)]', filterError(10, '=~ /y/)]', '"="')],
    ['.a[?(@.x in ["a"])]', filterError(10, 'in ["a"])]', '"i"')],
    ['.a[?(@..x)]', filterError(8, '.x)]', '"."')],
    ['.a[?(@.x[*])]', filterError(10, '*])]', '"*"')],
    ['.a[?(@.x = 1)]', filterError(10, '= 1)]', '"="')],
    ['.a[?(@.x === 1)]', filterError(12, '= 1)]', '"="')],
    ['.a[?(@.x == undefined)]', filterError(13, 'undefined)]', '"u"')],
    ['.a[?(@.x == truex)]', filterError(13, 'truex)]', '"t"')],
    ['.a[?(@.x == 1]', filterError(14, ']', '"]"')],
    ['.a[?(@.x == 1)', 'invalid JSONPath at character 15: missing "]"'],
    ['.a[?(@.x', filterError(9, '', 'the end of the path').replace(' (near "")', '')],
    ['.a[?(x)]', filterError(6, 'x)]', '"x"')],
    [
      '.a[?(@.x == "unterminated)]',
      'invalid JSONPath at character 13 (near "\\"unterminated)]"): unterminated quoted string',
    ],
    [
      '.a[0,1]',
      "invalid JSONPath at character 5 (near \",1]\"): unions such as [0,1] or ['a','b'] are not supported",
    ],
    [
      ".a['x','y']",
      "invalid JSONPath at character 7 (near \",'y']\"): unions such as [0,1] or ['a','b'] are not supported",
    ],
    [
      '.a[::0]',
      'invalid JSONPath at character 7 (near "]"): a slice step must be a positive integer',
    ],
    [
      '.a[::-1]',
      'invalid JSONPath at character 8 (near "]"): a slice step must be a positive integer',
    ],
    [
      '.a[]',
      'invalid JSONPath at character 4 (near "]"): unsupported selector: use [n], [start:end:step], [*], [\'key\'] or [?(...)]',
    ],
    [
      '.a[x]',
      'invalid JSONPath at character 4 (near "x]"): unsupported selector: use [n], [start:end:step], [*], [\'key\'] or [?(...)]',
    ],
    [
      '.a[?]',
      'invalid JSONPath at character 4 (near "?]"): unsupported selector: use [n], [start:end:step], [*], [\'key\'] or [?(...)]',
    ],
    ['.a[1e3]', 'invalid JSONPath at character 5 (near "e3]"): expected "]", found "e"'],
    ['.a[-]', 'invalid JSONPath at character 4 (near "-]"): expected digits after "-"'],
    [
      '.a[99999999999]',
      'invalid JSONPath at character 4 (near "99999999999]"): index 99999999999 is out of range',
    ],
    [
      '.a[',
      "invalid JSONPath at character 4: unsupported selector: use [n], [start:end:step], [*], ['key'] or [?(...)]",
    ],
    ['.a[0', 'invalid JSONPath at character 5: missing "]"'],
    [".a['x]", 'invalid JSONPath at character 4 (near "\'x]"): unterminated quoted string'],
    ['.a.', 'invalid JSONPath at character 4: expected a field name after "."'],
    ['.a..', 'invalid JSONPath at character 5: ".." must be followed by a field name, * or [...]'],
    [
      '...a',
      'invalid JSONPath at character 3 (near ".a"): ".." must be followed by a field name, * or [...]',
    ],
    ['.a b', 'invalid JSONPath at character 3 (near " b"): unexpected whitespace'],
    [
      '.a*b',
      'invalid JSONPath at character 3 (near "*b"): unexpected "*"; quote unusual keys as [\'key\']',
    ],
    [
      '.*b',
      'invalid JSONPath at character 3 (near "b"): unexpected "b"; quote unusual keys as [\'key\']',
    ],
    [
      '.a\\',
      'invalid JSONPath at character 4: a backslash must be followed by the character it escapes',
    ],
  ])('rejects %j', (path, message) => {
    expect(evaluateJsonPath(path, POD)).toEqual({
      ok: false,
      problems: [{ path: '', reason: 'ParameterResolutionFailed', message }],
    });
  });

  it('rejects the jsonpath-plus 10.x eval exploit without running it', () => {
    const exploit =
      "..[?(@.constructor[(@.getPrototypeOf(@).constructor('globalThis.pwned=1')())])]";
    expect(evaluateJsonPath(exploit, POD)).toEqual({
      ok: false,
      problems: [
        {
          path: '',
          reason: 'ParameterResolutionFailed',
          message: filterError(20, '(@.getPrototypeOf(@)', '"("'),
        },
      ],
    });
    expect((globalThis as Record<string, unknown>).pwned).toBeUndefined();
  });
});

describe('evaluateJsonPath enforces its limits', () => {
  const listOf = (n: number): unknown => ({
    items: Array.from({ length: n }, (_, i) => ({ metadata: { name: `o${i}` } })),
  });

  it.each<[string, string, boolean]>([
    ['a path of exactly the limit is evaluated', `.${'a'.repeat(MAX_JSONPATH_LENGTH - 1)}`, true],
    [
      'a path one character over the limit is rejected',
      `.${'a'.repeat(MAX_JSONPATH_LENGTH)}`,
      false,
    ],
  ])('%s', (_name, path, accepted) => {
    expect(evaluateJsonPath(path, POD)).toEqual(
      accepted
        ? { ok: true, value: [] }
        : {
            ok: false,
            problems: [
              {
                path: '',
                reason: 'ParameterResolutionFailed',
                message: 'JSONPath is 1025 characters long; the limit is 1024',
              },
            ],
          },
    );
  });

  it.each<[string, number, string | undefined]>([
    ['exactly 10000 matches are returned', MAX_JSONPATH_MATCHES, undefined],
    [
      '10001 matches are rejected',
      MAX_JSONPATH_MATCHES + 1,
      'JSONPath matched more than 10000 values',
    ],
  ])('%s', (_name, count, message) => {
    const outcome = evaluateJsonPath('.items[*].metadata.name', listOf(count));
    if (message === undefined) {
      expect(outcome.ok && outcome.value.length).toBe(count);
      expect(outcome.ok && outcome.value[count - 1]).toBe(`o${count - 1}`);
    } else {
      expect(outcome).toEqual({
        ok: false,
        problems: [{ path: '', reason: 'ParameterResolutionFailed', message }],
      });
    }
  });

  it('a step that visits more than 100000 values is rejected even if few would match', () => {
    expect(evaluateJsonPath('..nothing', listOf(50_000))).toEqual({
      ok: false,
      problems: [
        {
          path: '',
          reason: 'ParameterResolutionFailed',
          message: 'JSONPath visits more than 100000 values; narrow it',
        },
      ],
    });
  });

  it('keeps the jsonpath-plus path cache bounded however many distinct keys users ask for', () => {
    const doc = { k2999: 'last' };
    for (let i = 0; i < 3000; i++) {
      evaluateJsonPath(`.k${i}`, doc);
    }
    const size = Object.keys(JSONPath.cache as Record<string, unknown>).length;
    expect(size).toBeLessThanOrEqual(MAX_LIBRARY_CACHE_ENTRIES);
    expect(values('.k2999', doc)).toEqual(['last']);
  });
});
