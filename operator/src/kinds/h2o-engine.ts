/**
 * H2O engines: nodeCount pods of one StatefulSet that find each other through a headless
 * Service (stable DNS names `<set>-<i>.<service>`), with no data volume; terminate is final.
 */
import { RESOURCE_KINDS } from '../../../shared/resources.ts';
import { engineUrl, profileText, specNumber, specText, type EngineKind } from './kind.ts';

export const h2oEngineKind: EngineKind = {
  kind: RESOURCE_KINDS.H2OEngine.kind,
  plural: RESOURCE_KINDS.H2OEngine.plural,
  collection: RESOURCE_KINDS.H2OEngine.collection,
  prefix: 'h2o',
  container: 'h2o',
  port: 54321,
  versionInfoField: 'h2oEngineVersionInfo',
  stopIntent: 'terminated',
  stopStates: { stopping: 'STATE_TERMINATING', stopped: 'STATE_TERMINATED' },
  hasConnectingState: true,
  runningReplicas: (engine) => Math.max(1, specNumber(engine, 'nodeCount', 1)),
  env: (engine, replicas) => [
    { name: 'JAVA_OPTS', value: profileText(engine, 'javaOptions') },
    { name: 'H2O_OPTS', value: profileText(engine, 'h2oOptions') },
    { name: 'CLASSPATH', value: profileText(engine, 'javaClasspath') },
    // The nodes form one cloud of this size; each finds the others by the Service's DNS.
    { name: 'H2O_NODE_COUNT', value: String(replicas) },
    {
      name: 'H2O_NODE_MEMORY',
      value: specText(engine, 'memoryBytes') ?? '',
    },
  ],
  urls: (engine, settings) => {
    const url = engineUrl(h2oEngineKind, engine, settings);
    return { apiUrl: url, loginUrl: url };
  },
};
