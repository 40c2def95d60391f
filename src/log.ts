// Structured logging: a constant message plus fields, JSON lines by default (pino) or plain text.
// Callers never pass Secret values; messages from the engine are already free of them.
import { pino, type Logger as PinoLogger } from 'pino';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

function textLine(line: string): string {
  const { level, time, msg, ...fields } = JSON.parse(line) as Record<string, unknown> & {
    level: string;
    time: string;
    msg: string;
  };
  const rest = Object.entries(fields)
    .filter(([k]) => k !== 'pid' && k !== 'hostname')
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  return `${time} ${level.toUpperCase().padEnd(5)} ${msg}${rest ? ` ${rest}` : ''}\n`;
}

function wrap(base: PinoLogger): Logger {
  return {
    debug: (message, fields) => base.debug(fields ?? {}, message),
    info: (message, fields) => base.info(fields ?? {}, message),
    warn: (message, fields) => base.warn(fields ?? {}, message),
    error: (message, fields) => base.error(fields ?? {}, message),
    child: (fields) => wrap(base.child(fields)),
  };
}

export function createLogger(options: {
  level: LogLevel;
  format: 'json' | 'text';
  destination?: NodeJS.WritableStream;
}): Logger {
  const out = options.destination ?? process.stderr;
  const stream =
    options.format === 'text' ? { write: (line: string) => out.write(textLine(line)) } : out;
  const base = pino(
    {
      level: options.level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    stream as NodeJS.WritableStream,
  );
  return wrap(base);
}

/** A logger that drops everything (tests, library use). */
export const silentLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  child: () => silentLogger,
};
