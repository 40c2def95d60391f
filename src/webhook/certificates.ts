// The webhook's own PKI: a self-signed CA and a serving certificate signed by it, generated with
// node:crypto keys and node-forge for the X.509 structure. Pure functions of their inputs (the
// clock is passed in), so renewal decisions are testable.
import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import forge from 'node-forge';

export interface CertificateBundle {
  caCert: string;
  caKey: string;
  /** PEM of every CA the webhook configuration should trust (the current one first). */
  caBundle: string;
  cert: string;
  key: string;
}

export const CA_LIFETIME_DAYS = 3650;
export const SERVING_LIFETIME_DAYS = 365;
/** Renew a certificate once it has less than this left. */
export const RENEW_BEFORE_DAYS = 30;

const DAY = 24 * 60 * 60 * 1000;

function keyPair(): { privatePem: string; publicPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    privatePem: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

function serial(): string {
  return forge.util.bytesToHex(forge.random.getBytesSync(16)).replace(/^[89a-f]/, '1');
}

function build(options: {
  subject: string;
  publicPem: string;
  signerKeyPem: string;
  issuer?: forge.pki.Certificate;
  now: Date;
  days: number;
  ca: boolean;
  dnsNames?: string[];
  ips?: string[];
}): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(options.publicPem);
  cert.serialNumber = serial();
  cert.validity.notBefore = new Date(options.now.getTime() - 5 * 60 * 1000);
  cert.validity.notAfter = new Date(options.now.getTime() + options.days * DAY);
  const subject = [{ name: 'commonName', value: options.subject }];
  cert.setSubject(subject);
  cert.setIssuer(options.issuer ? options.issuer.subject.attributes : subject);
  const extensions: object[] = [
    { name: 'basicConstraints', cA: options.ca },
    options.ca
      ? { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true }
      : { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
  ];
  if (!options.ca) {
    extensions.push({ name: 'extKeyUsage', serverAuth: true });
    extensions.push({
      name: 'subjectAltName',
      altNames: [
        ...(options.dnsNames ?? []).map((value) => ({ type: 2, value })),
        ...(options.ips ?? []).map((ip) => ({ type: 7, ip })),
      ],
    });
  }
  cert.setExtensions(extensions);
  cert.sign(forge.pki.privateKeyFromPem(options.signerKeyPem), forge.md.sha256.create());
  return cert;
}

/** Issues a serving certificate for `hosts` (DNS names and IP addresses) from an existing CA. */
export function issueServingCert(
  caCert: string,
  caKey: string,
  hosts: string[],
  now: Date,
): { cert: string; key: string } {
  const ca = forge.pki.certificateFromPem(caCert);
  const pair = keyPair();
  const ips = hosts.filter((h) => /^[\d.]+$|:/.test(h));
  const dnsNames = hosts.filter((h) => !ips.includes(h));
  const cert = build({
    subject: dnsNames[0] ?? ips[0] ?? 'stencil-webhook',
    publicPem: pair.publicPem,
    signerKeyPem: caKey,
    issuer: ca,
    now,
    days: SERVING_LIFETIME_DAYS,
    ca: false,
    dnsNames,
    ips,
  });
  return { cert: forge.pki.certificateToPem(cert), key: pair.privatePem };
}

/** A new CA and a serving certificate for `hosts`. */
export function createBundle(hosts: string[], now: Date): CertificateBundle {
  const pair = keyPair();
  const ca = build({
    subject: 'stencil-webhook-ca',
    publicPem: pair.publicPem,
    signerKeyPem: pair.privatePem,
    now,
    days: CA_LIFETIME_DAYS,
    ca: true,
  });
  const caCert = forge.pki.certificateToPem(ca);
  return {
    caCert,
    caKey: pair.privatePem,
    caBundle: caCert,
    ...issueServingCert(caCert, pair.privatePem, hosts, now),
  };
}

function expiresWithin(pem: string, now: Date, days: number): boolean {
  return new Date(new X509Certificate(pem).validTo).getTime() - now.getTime() < days * DAY;
}

function coversHosts(pem: string, hosts: string[]): boolean {
  const san = new X509Certificate(pem).subjectAltName ?? '';
  return hosts.every((h) => san.includes(`DNS:${h}`) || san.includes(`IP Address:${h}`));
}

/**
 * What to serve next: the same bundle while it is good; a re-issued serving certificate when it
 * nears expiry or misses a host; a new CA (trusted alongside the old one until it expires) when
 * the CA itself nears expiry.
 */
export function renewBundle(
  current: CertificateBundle | undefined,
  hosts: string[],
  now: Date,
): { bundle: CertificateBundle; changed: boolean } {
  if (!current) return { bundle: createBundle(hosts, now), changed: true };
  if (expiresWithin(current.caCert, now, RENEW_BEFORE_DAYS * 12)) {
    const fresh = createBundle(hosts, now);
    const stillValid = expiresWithin(current.caCert, now, 0) ? '' : current.caCert;
    return { bundle: { ...fresh, caBundle: `${fresh.caCert}${stillValid}` }, changed: true };
  }
  if (expiresWithin(current.cert, now, RENEW_BEFORE_DAYS) || !coversHosts(current.cert, hosts)) {
    return {
      bundle: { ...current, ...issueServingCert(current.caCert, current.caKey, hosts, now) },
      changed: true,
    };
  }
  return { bundle: current, changed: false };
}
