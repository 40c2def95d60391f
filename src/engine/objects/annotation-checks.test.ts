// Tables for the annotation checks every render and the dry run share (issue #22, ADR 0017).
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../api/object-meta.ts';
import { renderedObjectProblem } from './annotation-checks.ts';

const object = (annotations: unknown): KubeObject =>
  ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'a', namespace: 'ns', annotations },
  }) as KubeObject;

describe('renderedObjectProblem refuses annotations that are not strings', () => {
  it.each<[string, unknown, string]>([
    [
      'a boolean',
      { 'stencil.dev/restart-on-change': true },
      'annotation stencil.dev/restart-on-change must be a string; quote it (got a boolean)',
    ],
    [
      'a number',
      { 'stencil.dev/wave': 3 },
      'annotation stencil.dev/wave must be a string; quote it (got a number)',
    ],
    [
      'null',
      { 'example.com/x': null },
      'annotation example.com/x must be a string; quote it (got null)',
    ],
    [
      'a map',
      { 'stencil.dev/restart-on-change-objects': { a: 1 } },
      'annotation stencil.dev/restart-on-change-objects must be a string; quote it (got a map)',
    ],
    ['annotations as a list', ['a'], 'metadata.annotations must be a map of strings, got a list'],
  ])('%s', (_what, annotations, message) => {
    expect(renderedObjectProblem(object(annotations))).toBe(`ConfigMap ns/a: ${message}`);
  });

  it('still refuses a wave that is not a whole number', () => {
    expect(renderedObjectProblem(object({ 'stencil.dev/wave': '1.5' }))).toBe(
      'ConfigMap ns/a: stencil.dev/wave must be a whole number, got "1.5"',
    );
  });

  it.each<[string, unknown]>([
    ['no annotations', undefined],
    ['string annotations', { 'stencil.dev/wave': '-2', 'stencil.dev/restart-on-change': 'true' }],
  ])('lets %s through', (_what, annotations) => {
    expect(renderedObjectProblem(object(annotations))).toBeUndefined();
  });
});

describe('renderedObjectProblem refuses a number JSON cannot hold, naming the field path', () => {
  const withSpec = (spec: unknown): KubeObject => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'w' },
    spec,
  });
  it.each<[string, unknown, string]>([
    ['NaN at the top of spec', { replicas: NaN }, 'spec.replicas is NaN'],
    [
      'Infinity in a list',
      { ports: [{ port: 80 }, { port: Infinity }] },
      'spec.ports[1].port is Infinity',
    ],
    ['-Infinity in a nested list', { a: [[1, -Infinity]] }, 'spec.a[0][1] is -Infinity'],
    ['the first of two, in document order', { a: NaN, b: Infinity }, 'spec.a is NaN'],
  ])('%s', (_what, spec, message) => {
    expect(renderedObjectProblem(withSpec(spec))).toBe(
      `Deployment w: ${message}, which JSON cannot hold: give a finite number`,
    );
  });

  it('lets finite numbers through', () => {
    expect(
      renderedObjectProblem(withSpec({ replicas: 3, ratio: -0.5, big: 1e300 })),
    ).toBeUndefined();
  });
});
