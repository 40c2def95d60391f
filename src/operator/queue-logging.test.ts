import { describe, expect, it } from 'vitest';
import type { LogFields, Logger } from '../log.ts';
import { Redactor } from '../engine/redaction/redaction.ts';
import { queueLogging } from './queue-logging.ts';

function recorder(): { logger: Logger; lines: { message: string; fields?: LogFields }[] } {
  const lines: { message: string; fields?: LogFields }[] = [];
  const logger: Logger = {
    debug: (message, fields) => lines.push({ message, fields }),
    info: (message, fields) => lines.push({ message, fields }),
    warn: (message, fields) => lines.push({ message, fields }),
    error: (message, fields) => lines.push({ message, fields }),
    child: () => logger,
  };
  return { logger, lines };
}

describe('the work queue log of a controller that reads Secrets', () => {
  const secret = 'SUPERSECRET-value';

  it('withholds the message of an error no Redactor went over', () => {
    const { logger, lines } = recorder();
    queueLogging(logger, 'templateinstance', { readsSecrets: true }).onProcessed?.(
      'team-a/shop',
      'error',
      3,
      new TypeError(`Invalid regular expression: /${secret}/`),
    );
    expect(JSON.stringify(lines)).not.toContain(secret);
    expect(lines[0]!.fields!.error).toBe(
      'TypeError (message withheld: it was not checked for Secret values)',
    );
  });

  it('logs the redacted message of an error a Redactor went over', () => {
    const { logger, lines } = recorder();
    const redactor = Redactor.of([{ name: 'pw', value: secret }]);
    const error = redactor.redactError(new Error(`ConfigMap "${secret}" is invalid`));
    queueLogging(logger, 'templateinstance', { readsSecrets: true }).onProcessed?.(
      'team-a/shop',
      'terminal',
      3,
      error,
    );
    expect(lines[0]!.fields!.error).toBe('ConfigMap "[redacted: parameters.pw]" is invalid');
  });

  it('logs messages as they are for a controller that never reads Secret data', () => {
    const { logger, lines } = recorder();
    queueLogging(logger, 'template').onProcessed?.('platform/web', 'error', 3, new Error('boom'));
    expect(lines[0]!.fields!.error).toBe('boom');
  });
});
