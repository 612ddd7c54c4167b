/** Names that end up in Kubernetes objects, checked before they are stored. */

/** A DNS-1123 subdomain: Secret, StorageClass and other object names. */
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const SUBDOMAIN_MAX = 253;

/** A domain-prefixed extended resource name, e.g. `nvidia.com/gpu` or `amd.com/gpu`. */
const EXTENDED_RESOURCE =
  /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+\/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/** The problem with an object name, or `undefined`. */
export function objectNameProblem(value: string): string | undefined {
  if (value.length > SUBDOMAIN_MAX) return `must be at most ${SUBDOMAIN_MAX} characters`;
  if (!SUBDOMAIN.test(value))
    return `"${value}" is not a Kubernetes object name (lowercase letters, digits, "-" and ".")`;
  return undefined;
}

/** The first bad secret name of a list, with its index. */
export function imagePullSecretsProblem(
  secrets: readonly string[],
): { index: number; problem: string } | undefined {
  for (const [index, secret] of secrets.entries()) {
    const problem = objectNameProblem(secret);
    if (problem) return { index, problem };
  }
  return undefined;
}

/** The problem with a GPU resource name, or `undefined`. */
export function extendedResourceProblem(value: string): string | undefined {
  if (value.length > SUBDOMAIN_MAX) return `must be at most ${SUBDOMAIN_MAX} characters`;
  if (!EXTENDED_RESOURCE.test(value) || value.split('/')[0]?.endsWith('kubernetes.io'))
    return `"${value}" is not an extended resource name such as "nvidia.com/gpu" or "amd.com/gpu"`;
  return undefined;
}
