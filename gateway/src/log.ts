import { pino, type Logger } from 'pino';

/** The gateway's structured log: JSON lines on stdout, level from AIEM_LOG_LEVEL (default info). */
export const log: Logger = pino({
  name: 'gateway',
  level: process.env['AIEM_LOG_LEVEL'] ?? 'info',
});
