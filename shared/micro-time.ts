/**
 * A Lease time (MicroTime) as the apiserver parses it: RFC 3339 with exactly six fractional
 * digits. The client library sends MicroTime values as they are typed (Date), and a Date would
 * go out with three, which the apiserver refuses; the string it needs travels in the Date's place.
 */
export function microTime(date: Date): Date {
  const text = date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
  return text as unknown as Date;
}
