/**
 * The metadata of a Driverless AI license, read from the license text the administrators put
 * in a Secret. A license is a block of `key:value` lines (the form Driverless AI prints and
 * reads), optionally base64-encoded as a whole, followed by its signature. Only the readable
 * lines are used; the signature is Driverless AI's to check, not ours: the metadata answered
 * is what the file says, not a verdict on its validity.
 */
import type { DAILicenseMetadata } from '../gen/ai/h2o/engine/v1/dai_license.pb.ts';
import type { DateMessage } from '../gen/google/type/date.pb.ts';

type Fields = Record<string, string>;

/** The license's `key:value` (or `key=value`) lines, keys lower-cased, the first of each kept. */
function fieldsOf(text: string): Fields {
  const fields: Fields = {};
  for (const line of text.split(/\r?\n/)) {
    const match = /^\s*([A-Za-z][A-Za-z0-9_ ]*?)\s*[:=]\s*(.*?)\s*$/.exec(line);
    if (match === null) continue;
    const key = (match[1] ?? '').toLowerCase().replace(/ /g, '_');
    fields[key] ??= match[2] ?? '';
  }
  return fields;
}

/** The license text itself: the file as given, or decoded when it is one base64 block. */
export function licenseText(raw: string): string {
  const compact = raw.replace(/\s+/g, '');
  if (fieldsOf(raw)['license_version'] !== undefined || !/^[A-Za-z0-9+/]+={0,2}$/.test(compact)) return raw;
  return Buffer.from(compact, 'base64').toString('utf8');
}

/** `2026/03/31`, `2026-03-31` or `20260331` as a calendar date; `undefined` for anything else. */
export function calendarDate(text: string | undefined): DateMessage | undefined {
  const match = /^(\d{4})[-/]?(\d{1,2})[-/]?(\d{1,2})/.exec(text?.trim() ?? '');
  if (match === null) return undefined;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  const valid =
    date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
  // Clients build a calendar date from the parts: an impossible one is left out, not sent.
  return valid ? { year, month, day } : undefined;
}

function int32(text: string): number {
  const value = Number(text);
  return Number.isInteger(value) && Math.abs(value) <= 2 ** 31 - 1 ? value : 0;
}

/** The metadata of a license file's text. */
export function licenseMetadata(raw: string): DAILicenseMetadata {
  const f = fieldsOf(licenseText(raw));
  const text = (...keys: string[]): string => keys.map((k) => f[k]).find((v) => v !== undefined) ?? '';
  return {
    licenseVersion: text('license_version'),
    serialNumber: int32(text('serial_number')),
    licenseeOrganization: text('licensee_organization'),
    licenseeEmail: text('licensee_email'),
    licenseeUserId: text('licensee_user_id'),
    isH2oInternalUse: text('is_h2o_internal_use').toLowerCase() === 'true',
    createdByEmail: text('created_by_email'),
    creationDate: calendarDate(text('creation_date', 'created')),
    product: text('product'),
    licenseType: text('license_type'),
    expirationDate: calendarDate(text('expiration_date', 'expires')),
  };
}
