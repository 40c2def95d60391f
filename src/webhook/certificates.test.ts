import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createBundle, renewBundle, SERVING_LIFETIME_DAYS } from './certificates.ts';

const DAY = 24 * 60 * 60 * 1000;
const now = new Date('2026-12-02T00:00:00Z');
const hosts = ['stencil-webhook.stencil.svc', '127.0.0.1'];

describe('webhook certificates', () => {
  const bundle = createBundle(hosts, now);

  it('issues a serving certificate for every host, signed by the CA', () => {
    const cert = new X509Certificate(bundle.cert);
    const ca = new X509Certificate(bundle.caCert);
    expect(cert.subjectAltName).toContain('DNS:stencil-webhook.stencil.svc');
    expect(cert.subjectAltName).toContain('IP Address:127.0.0.1');
    expect(cert.verify(ca.publicKey)).toBe(true);
    expect(cert.checkIssued(ca)).toBe(true);
    expect(ca.ca).toBe(true);
  });

  it('keeps a bundle that is not due', () => {
    expect(renewBundle(bundle, hosts, new Date(now.getTime() + 10 * DAY))).toEqual({
      bundle,
      changed: false,
    });
  });

  it('re-issues the serving certificate before it expires, keeping the CA', () => {
    const later = new Date(now.getTime() + (SERVING_LIFETIME_DAYS - 10) * DAY);
    const { bundle: next, changed } = renewBundle(bundle, hosts, later);
    expect(changed).toBe(true);
    expect(next.caCert).toBe(bundle.caCert);
    expect(next.cert).not.toBe(bundle.cert);
    expect(new Date(new X509Certificate(next.cert).validTo).getTime()).toBeGreaterThan(
      later.getTime() + 300 * DAY,
    );
  });

  it('re-issues when a host is missing', () => {
    expect(renewBundle(bundle, [...hosts, 'other.svc'], now).changed).toBe(true);
  });

  it('replaces a CA near its end, trusting the old one alongside until it expires', () => {
    const late = new Date(now.getTime() + 3400 * DAY);
    const { bundle: next } = renewBundle(bundle, hosts, late);
    expect(next.caCert).not.toBe(bundle.caCert);
    expect(next.caBundle).toContain(bundle.caCert.trim());
    expect(next.caBundle.startsWith(next.caCert)).toBe(true);
  });
});
