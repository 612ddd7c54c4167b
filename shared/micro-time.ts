import { V1MicroTime } from '@kubernetes/client-node';

/**
 * A Lease time (MicroTime) as the apiserver parses it: RFC 3339 with exactly six fractional
 * digits. A plain Date would go out with three, which the apiserver refuses; the client
 * library's V1MicroTime is a Date that writes itself with six.
 */
export function microTime(date: Date): Date {
  return new V1MicroTime(date.getTime());
}
