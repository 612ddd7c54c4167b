import { HttpMethod, KubeConfig, RequestContext } from '@kubernetes/client-node';
import { pooled } from './kube-transport.ts';

/** A kubeconfig trusting the CA `ca` (any bytes: no connection is made). */
function kubeConfig(ca: string): KubeConfig {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:6443', caData: Buffer.from(ca).toString('base64') }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return pooled(config);
}

/** The connection pool a call made with `config` goes through. */
async function poolOf(config: KubeConfig): Promise<unknown> {
  const context = new RequestContext('https://127.0.0.1:6443/api', HttpMethod.GET);
  await config.applySecurityAuthentication(context);
  return context.getDispatcher();
}

describe('pooled()', () => {
  test('every call with the same server and credentials goes through one pool', async () => {
    const config = kubeConfig('ca one');
    const first = await poolOf(config);
    expect(first).toBeDefined();
    expect(await poolOf(config)).toBe(first);
  });

  test('rotated credentials get a pool of their own', async () => {
    const config = kubeConfig('ca one');
    const before = await poolOf(config);
    const cluster = config.getCurrentCluster();
    if (cluster === null) throw new Error('no cluster');
    config.clusters = [{ ...cluster, caData: Buffer.from('ca two').toString('base64') }];
    const after = await poolOf(config);
    expect(after).not.toBe(before);
    expect(await poolOf(config)).toBe(after);
  });
});
