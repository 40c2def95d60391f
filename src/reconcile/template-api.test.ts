// Which failures to apply a Template's CRD are said in its status (APIInvalid) instead of being
// retried forever: the ones the same CRD meets every time.
import { describe, expect, it } from 'vitest';
import { ClusterError } from './cluster-port.ts';
import { crdRefusal } from './template-api.ts';

describe('crdRefusal', () => {
  it.each([
    ['an invalid CRD', new ClusterError('Invalid', 'spec.names.plural: Invalid value', 422), true],
    [
      'etcd refusing its size',
      new ClusterError('Other', 'etcdserver: request is too large', 500),
      true,
    ],
    ['a proxy refusing its size', new ClusterError('Other', 'Request Entity Too Large', 413), true],
    ['an unavailable API server', new ClusterError('Transient', 'service unavailable', 503), false],
    ['a conflict', new ClusterError('Conflict', 'the object has been modified', 409), false],
    ['no API error at all', new Error('socket hang up'), false],
  ])('%s: refused for good = %s', (_name, error, refused) => {
    expect(crdRefusal(error) !== undefined).toBe(refused);
  });
});
