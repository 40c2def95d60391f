import { describe, expect, it } from 'vitest';
import { CRD_CASES, outermostPaths } from '../../../test/fixtures/crd-cases.ts';
import { API_VERSION } from '../../api/well-known.ts';
import { toFieldPath, validateAgainstCrd } from './schema-validation.ts';

describe('the offline CRD validator agrees with the API server', () => {
  it.each(CRD_CASES)('$name', ({ kind, spec, rejected }) => {
    const problems = validateAgainstCrd(kind, {
      apiVersion: API_VERSION,
      kind,
      metadata: { name: 'x' },
      spec,
    });
    if (!rejected) {
      expect(problems).toEqual([]);
      return;
    }
    expect(outermostPaths(problems.map((p) => p.path))).toEqual([...rejected.fields].sort());
    expect(problems.map((p) => p.message).join('\n')).toContain(rejected.message);
  });
});

describe('schema validation beyond the table', () => {
  it('requires metadata.name', () => {
    const problems = validateAgainstCrd('Template', {
      apiVersion: API_VERSION,
      kind: 'Template',
      metadata: {},
      spec: { handlebars: 'x' },
    });
    expect(problems).toEqual([expect.objectContaining({ path: 'metadata.name' })]);
  });

  it('rejects a document that is not a mapping', () => {
    expect(validateAgainstCrd('Template', ['a'])[0]?.message).toContain(
      'must be a YAML/JSON mapping',
    );
  });

  it('reports the actual type when a field has the wrong one (an unquoted YAML 1.1 off)', () => {
    const problems = validateAgainstCrd('Template', {
      apiVersion: API_VERSION,
      kind: 'Template',
      metadata: { name: 'x' },
      spec: { handlebars: 'x', sync: { mode: false } },
    });
    expect(problems).toEqual([
      expect.objectContaining({
        path: 'spec.sync.mode',
        message: 'Invalid value: "boolean": must be of type string',
      }),
    ]);
  });

  it('says a value is too long to check against its pattern rather than passing it', () => {
    const problems = validateAgainstCrd('TemplateInstance', {
      apiVersion: API_VERSION,
      kind: 'TemplateInstance',
      metadata: { name: 'x' },
      spec: { templateRef: { name: 't' }, ttl: '1'.repeat(3_000_000) },
    });
    expect(problems).toEqual([
      expect.objectContaining({
        path: '',
        message:
          'cannot be checked: a value of 3000000 characters is too long to check against the ' +
          'pattern ^([0-9]+[smhd])+$ (more than 20000000 steps)',
      }),
    ]);
  });

  it.each([
    ['/spec/parameters/0/name', 'spec.parameters[0].name'],
    ['', ''],
    ['/metadata/labels/a~1b', 'metadata.labels.a/b'],
  ])('turns the JSON pointer %j into the field path %j', (pointer, path) => {
    expect(toFieldPath(pointer)).toBe(path);
  });
});
