/**
 * The final Driverless AI configuration of an engine. Pure.
 *
 * Priority, highest first: the profile's configurationOverride, the service's core configuration
 * (see shared/dai-config.ts for its keys), the engine's own config, the profile's
 * baseConfiguration. Reserved (core) keys in the engine's config are dropped silently.
 */
import type { DAIEngineProfileInfo } from '../gen/resources.ts';

export interface DaiConfigInput {
  profile: Pick<DAIEngineProfileInfo, 'baseConfiguration' | 'configurationOverride'>;
  engineConfig: Readonly<Record<string, string>>;
  core: Readonly<Record<string, string>>;
  reservedKeys: readonly string[];
}

function stringMap(value: Readonly<Record<string, unknown>> | undefined): Record<string, string> {
  if (value === undefined) return {};
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, String(v)]));
}

export function daiConfiguration(input: DaiConfigInput): Record<string, string> {
  const engine = Object.fromEntries(
    Object.entries(input.engineConfig).filter(([key]) => !input.reservedKeys.includes(key)),
  );
  return {
    ...stringMap(input.profile.baseConfiguration),
    ...engine,
    ...input.core,
    ...stringMap(input.profile.configurationOverride),
  };
}

/**
 * `key = value` lines, sorted by key, as Driverless AI reads its config.toml. Values are TOML
 * literals when they already are one (numbers, booleans, quoted strings, arrays), else quoted
 * strings: configuration maps carry TOML values as text.
 */
export function toToml(config: Readonly<Record<string, string>>): string {
  return Object.keys(config)
    .sort()
    .map((key) => `${tomlKey(key)} = ${tomlValue(config[key] ?? '')}`)
    .join('\n')
    .concat('\n');
}

function tomlKey(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key);
}

const LITERAL = /^(true|false|[+-]?\d+(\.\d+)?([eE][+-]?\d+)?|"(?:[^"\\\n]|\\.)*"|\[[^\n]*\])$/;

function tomlValue(value: string): string {
  return LITERAL.test(value.trim()) ? value.trim() : JSON.stringify(value);
}
