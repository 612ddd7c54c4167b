/**
 * Driverless AI configuration keys that the service sets itself for every engine (the "core"
 * configuration). Users may send them; they are dropped silently, as the product promises, and
 * the operator writes the values below into the engine's final configuration.
 *
 * | key | value | why |
 * | --- | --- | --- |
 * | `ip` | `0.0.0.0` | the server must listen on the pod network |
 * | `port` | `12345` | the port the Service and probes use |
 * | `data_directory` | `/data` | the engine's persistent volume |
 * | `log_directory` | `/data/log` | logs survive pauses and can be downloaded |
 * | `authentication_method` | `openid` | users log in through the platform's identity provider |
 * | `base_url` | the engine's path | the engine is served under its own path |
 * | `enable_triton_server_local` | the profile's tritonEnabled | set by the administrator, not the user |
 */
export const CORE_DAI_CONFIG_KEYS: readonly string[] = [
  'ip',
  'port',
  'data_directory',
  'log_directory',
  'authentication_method',
  'base_url',
  'enable_triton_server_local',
];

/** The engine configuration without the reserved keys. */
export function withoutReservedKeys(config: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(config).filter(([key]) => !CORE_DAI_CONFIG_KEYS.includes(key)));
}
