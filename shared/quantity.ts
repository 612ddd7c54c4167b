const BINARY: Record<string, bigint> = {
  Ki: 1n << 10n,
  Mi: 1n << 20n,
  Gi: 1n << 30n,
  Ti: 1n << 40n,
  Pi: 1n << 50n,
  Ei: 1n << 60n,
};
const DECIMAL: Record<string, bigint> = {
  '': 1n,
  k: 10n ** 3n,
  M: 10n ** 6n,
  G: 10n ** 9n,
  T: 10n ** 12n,
  P: 10n ** 15n,
  E: 10n ** 18n,
};

/**
 * Parses a Kubernetes resource quantity of storage ("10Gi", "500M", "1.5Gi", "1e3") into whole
 * bytes, rounding a fraction of a byte up as Kubernetes does.
 *
 * @throws TypeError when the text is not a quantity
 */
export function parseStorageQuantity(text: string): bigint {
  const match = /^([0-9]+)(?:\.([0-9]+))?(?:(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)|[eE]([0-9]+))?$/.exec(
    text.trim(),
  );
  if (match === null) throw new TypeError(`Not a storage quantity: "${text}"`);
  const [, whole = '0', fraction = '', suffix = '', exponent] = match;
  const multiplier =
    exponent !== undefined ? 10n ** BigInt(exponent) : (BINARY[suffix] ?? DECIMAL[suffix] ?? 1n);
  const scale = 10n ** BigInt(fraction.length);
  const numerator = (BigInt(whole) * scale + BigInt(fraction || '0')) * multiplier;
  return (numerator + scale - 1n) / scale;
}
