// How Stencil reads a user's YAML (rendered output, CLI files, annotations): as kubectl and the
// API server read it, through sigs.k8s.io/yaml over go-yaml v2 (docs/adr/0036). That is YAML 1.1
// scalars without two of its types: a timestamp (2026-01-15) and a base-60 number (12:30) stay
// strings, as go-yaml v2 keeps them when it decodes into JSON; `0o17` and `0X1F` are numbers, as
// Go reads them; `.` and `.e3` are text; and `.inf` or `.nan`, which no JSON can hold, are
// refused as the API server refuses them. test/integration/yaml-reading.test.ts holds the table.
import type { ParseOptions, ScalarTag, SchemaOptions } from 'yaml';

type Tags = Exclude<
  Exclude<SchemaOptions['customTags'], null | undefined>,
  (...a: never) => unknown
>;

const TIMESTAMP = 'tag:yaml.org,2002:timestamp';

/** `0o17` and `0O17`: Go's strconv.ParseInt, which go-yaml v2 calls, reads them as octal. */
const octalO: ScalarTag = {
  identify: () => false,
  default: true,
  tag: 'tag:yaml.org,2002:int',
  format: 'OCT',
  test: /^[-+]?0[oO][0-7_]+$/,
  resolve(text) {
    const negative = text.startsWith('-');
    const digits = text.replace(/^[-+]?0[oO]/, '').replace(/_/g, '');
    const value = parseInt(digits, 8);
    return negative ? -value : value;
  },
};

/** `0X1F`: Go reads a capital X as hex too. */
const hexX: ScalarTag = {
  identify: () => false,
  default: true,
  tag: 'tag:yaml.org,2002:int',
  format: 'HEX',
  test: /^[-+]?0X[0-9a-fA-F_]+$/,
  resolve(text) {
    const value = parseInt(text.replace(/^[-+]?0X/, '').replace(/_/g, ''), 16);
    return text.startsWith('-') ? -value : value;
  },
};

/** `.`, `-.` and `.e3`: the yaml package's float patterns take them (as NaN); Go keeps text. */
const notANumber: ScalarTag = {
  identify: () => false,
  default: true,
  tag: 'tag:yaml.org,2002:str',
  test: /^[-+]?(?:\.|\.?[eE][-+]?[0-9]+)$/,
  resolve: (text) => text,
};

/** Infinities and NaN: go-yaml v2 reads them, but they have no JSON, so the document is refused. */
const notJson: ScalarTag = {
  identify: () => false,
  default: true,
  tag: 'tag:yaml.org,2002:float',
  test: /^(?:[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/,
  resolve(text, onError) {
    onError(`${text} has no JSON value (the API server refuses it); quote it to keep the text`);
    return text;
  },
};

function kubernetesTags(tags: Tags): Tags {
  const kept = tags.filter(
    (t) => typeof t === 'string' || (t.tag !== TIMESTAMP && t.format !== 'TIME'),
  );
  return [octalO, hexX, notANumber, notJson, ...kept];
}

/** The parse options every reading of a user's YAML starts from. */
export const KUBERNETES_YAML: ParseOptions & SchemaOptions & { version: '1.1' } = {
  version: '1.1',
  customTags: kubernetesTags,
};
