// The formats as the API server's Go decoding reads them. Each row's verdict was taken from
// k8s.io/apimachinery v0.36.3 (json.Unmarshal into metav1.Time, MicroTime, resource.Quantity,
// []byte, int32), so these tables are the server's answers, not ours.
import { describe, expect, it } from 'vitest';
import {
  isBase64,
  isInt32,
  isInt64,
  isMicroTime,
  isQuantity,
  isTime,
} from './kubernetes-formats.ts';

describe('isTime: metav1.Time', () => {
  it.each([
    ['2024-01-02T03:04:05Z', true],
    ['2024-01-02T03:04:05.123Z', true],
    ['2024-01-02T03:04:05,123Z', true],
    ['2024-01-02T03:04:05.1234567891Z', true],
    ['2024-01-02T03:04:05-00:00', true],
    ['2024-01-02T03:04:05+23:59', true],
    ['2024-01-02T03:04:05+24:00', true],
    ['2024-01-02T03:04:05+01:60', true],
    ['0000-01-01T00:00:00Z', true],
    ['2024-02-29T00:00:00Z', true],
    ['2024-01-02t03:04:05Z', false],
    ['2024-01-02T03:04:05z', false],
    ['2024-01-02 03:04:05Z', false],
    ['2024-01-02T24:00:00Z', false],
    ['2024-01-02T23:59:60Z', false],
    ['2024-02-30T00:00:00Z', false],
    ['2023-02-29T00:00:00Z', false],
    ['2024-01-02T03:04:05+25:00', false],
    ['2024-01-02T03:04:05+01:99', false],
    ['2024-01-02T03:04:05+0100', false],
    ['2024-1-02T03:04:05Z', false],
    ['2024-01-02T03:04:05.Z', false],
    ['2024-01-02T03:04Z', false],
    ['', false],
  ])('%j → %s', (text, valid) => {
    expect(isTime(text)).toBe(valid);
  });
});

describe('isMicroTime: metav1.MicroTime', () => {
  it.each([
    ['2024-01-02T03:04:05.123456Z', true],
    ['2024-01-02T03:04:05.123456+01:00', true],
    ['2024-01-02T03:04:05Z', false],
    ['2024-01-02T03:04:05.12345Z', false],
    ['2024-01-02T03:04:05.1234567Z', false],
    // A comma before the six decimals: the API server accepts it (the differential test found it).
    ['2024-01-02T03:04:05,123456Z', true],
    ['2024-01-02T03:04:05,12345Z', false],
  ])('%j → %s', (text, valid) => {
    expect(isMicroTime(text)).toBe(valid);
  });
});

describe('isQuantity: resource.Quantity from a JSON string', () => {
  it.each([
    ['1', true],
    ['1.5', true],
    ['100m', true],
    ['1Gi', true],
    ['1e3', true],
    ['1E3', true],
    ['1E', true],
    ['1n', true],
    ['1u', true],
    ['1k', true],
    ['.5', true],
    ['5.', true],
    ['.', true],
    ['+1', true],
    ['-1', true],
    [' 1 ', true],
    ['1Mi ', true],
    ['1e-3', true],
    ['1e+3', true],
    ['1.0001m', true],
    ['Gi', true],
    ['9223372036854775808000', true],
    ['1gi', false],
    ['1e', false],
    ['1K', false],
    ['1 Gi', false],
    ['', false],
    ['1.5.5', false],
    ['0x10', false],
    ['1m5', false],
    ['1EB', false],
    ['1e3m', false],
    ['١', false],
    ['1e9223372036854775808', false],
  ])('%j → %s', (text, valid) => {
    expect(isQuantity(text)).toBe(valid);
  });
});

describe('isBase64: []byte', () => {
  it.each([
    ['aGk=', true],
    ['', true],
    ['aG\nk=', true],
    ['aGk=\r\n', true],
    ['YQ==', true],
    ['aGk', false],
    ['a====', false],
    ['aGk=aGk=', false],
    ['aGk_', false],
    ['aGk-', false],
    ['YQ', false],
    ['Y Q==', false],
  ])('%j → %s', (text, valid) => {
    expect(isBase64(text)).toBe(valid);
  });
});

describe('integers', () => {
  it('int32 takes whole numbers in [-2^31, 2^31 - 1]', () => {
    expect([2 ** 31 - 1, -(2 ** 31), 0].map(isInt32)).toEqual([true, true, true]);
    expect([2 ** 31, -(2 ** 31) - 1, 1.5].map(isInt32)).toEqual([false, false, false]);
  });

  it('int64 takes whole numbers below 2^63 in magnitude', () => {
    expect([2 ** 53, -(2 ** 63), 2 ** 63 - 1024].map(isInt64)).toEqual([true, true, true]);
    expect([2 ** 63, 0.5].map(isInt64)).toEqual([false, false]);
  });
});
