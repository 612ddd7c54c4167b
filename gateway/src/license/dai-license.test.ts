import { calendarDate, licenseMetadata, licenseText } from './dai-license.ts';

// A made-up license in the readable `key:value` form, followed by its signature block.
const LICENSE = [
  'license_version:1',
  'serial_number:4242',
  'licensee_organization:Example Corp',
  'licensee_email:ops@example.com',
  'licensee_user_id:77',
  'is_h2o_internal_use:false',
  'created_by_email:sales@example.com',
  'creation_date:2026/01/15',
  'product:DriverlessAI',
  'license_type:developer',
  'expiration_date:2027/01/15',
  'c2lnbmF0dXJlIGJ5dGVzIHRoYXQgYXJlIG5vdCByZWFk',
].join('\n');

describe('licenseMetadata()', () => {
  test('reads every field the API reports, dates as calendar dates and the serial as a number', () => {
    expect(licenseMetadata(LICENSE)).toEqual({
      licenseVersion: '1',
      serialNumber: 4242,
      licenseeOrganization: 'Example Corp',
      licenseeEmail: 'ops@example.com',
      licenseeUserId: '77',
      isH2oInternalUse: false,
      createdByEmail: 'sales@example.com',
      creationDate: { year: 2026, month: 1, day: 15 },
      product: 'DriverlessAI',
      licenseType: 'developer',
      expirationDate: { year: 2027, month: 1, day: 15 },
    });
  });

  test('reads a license that is one base64 block', () => {
    const encoded = Buffer.from(LICENSE)
      .toString('base64')
      .replace(/(.{64})/g, '$1\n');
    expect(licenseText(encoded)).toBe(LICENSE);
    expect(licenseMetadata(encoded).licenseeOrganization).toBe('Example Corp');
  });

  test('leaves out what it cannot read rather than sending values clients crash on', () => {
    const metadata = licenseMetadata('serial_number:not-a-number\nexpiration_date:2027/02/30\n');
    expect(metadata.serialNumber).toBe(0);
    expect(metadata.expirationDate).toBeUndefined();
    expect(metadata.creationDate).toBeUndefined();
  });
});

test.each([
  ['2026/03/31', { year: 2026, month: 3, day: 31 }],
  ['2026-03-31', { year: 2026, month: 3, day: 31 }],
  ['20260331', { year: 2026, month: 3, day: 31 }],
  ['2026/02/29', undefined],
  ['2026/13/01', undefined],
  ['tomorrow', undefined],
  [undefined, undefined],
])('calendarDate(%p)', (text, date) => {
  expect(calendarDate(text)).toEqual(date);
});
