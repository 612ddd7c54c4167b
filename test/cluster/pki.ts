import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { dump } from 'js-yaml';

const run = promisify(execFile);

/** Files and secrets that the control plane's components share. */
export interface Pki {
  caCert: string;
  caKey: string;
  apiserverCert: string;
  apiserverKey: string;
  /**
   * kwok's serving certificate for 127.0.0.1, from the same CA: the apiserver reaches kwok's
   * kubelet endpoints (pod logs) and verifies it as it would verify a kubelet.
   */
  kwokCert: string;
  kwokKey: string;
  /**
   * The client certificate the apiserver presents to aggregated APIs (metrics-server), CN
   * front-proxy-client, from the same CA, which also verifies it (requestheader client CA).
   */
  frontProxyCert: string;
  frontProxyKey: string;
  /** The client certificate the apiserver presents to kubelets (logs, exec, port-forward). */
  kubeletClientCert: string;
  kubeletClientKey: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
  /** A bearer token of the `system:masters` group, for the admin kubeconfig. */
  adminToken: string;
  tokenFile: string;
}

/**
 * Creates a throw-away CA, the apiserver's and kwok's serving certificates for the loopback
 * address, the service-account signing key pair and a static admin token, all inside `dir`.
 */
export async function createPki(dir: string): Promise<Pki> {
  const path = (name: string): string => join(dir, name);
  const openssl = (...args: string[]): Promise<unknown> => run('openssl', args);
  await openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '30',
    '-subj',
    '/CN=ai-engine-manager-test-ca',
    '-keyout',
    path('ca.key'),
    '-out',
    path('ca.crt'),
  );
  await openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=kube-apiserver',
    '-keyout',
    path('apiserver.key'),
    '-out',
    path('apiserver.csr'),
  );
  await writeFile(
    path('apiserver.ext'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default.svc\n',
  );
  await openssl(
    'x509',
    '-req',
    '-in',
    path('apiserver.csr'),
    '-CA',
    path('ca.crt'),
    '-CAkey',
    path('ca.key'),
    '-CAcreateserial',
    '-days',
    '30',
    '-extfile',
    path('apiserver.ext'),
    '-out',
    path('apiserver.crt'),
  );
  await issueLoopbackCertificate(dir, 'kwok');
  await issueLoopbackCertificate(dir, 'front-proxy-client');
  await issueCertificate({ caCert: path('ca.crt'), caKey: path('ca.key') }, dir, {
    name: 'apiserver-kubelet-client',
    subject: '/CN=kube-apiserver-kubelet-client/O=system:masters',
  });
  await openssl('genrsa', '-out', path('sa.key'), '2048');
  await openssl('rsa', '-in', path('sa.key'), '-pubout', '-out', path('sa.pub'));
  const adminToken = randomBytes(24).toString('hex');
  await writeFile(path('tokens.csv'), `${adminToken},cluster-admin,cluster-admin,"system:masters"\n`, {
    mode: 0o600,
  });
  return {
    caCert: path('ca.crt'),
    caKey: path('ca.key'),
    apiserverCert: path('apiserver.crt'),
    apiserverKey: path('apiserver.key'),
    kwokCert: path('kwok.crt'),
    kwokKey: path('kwok.key'),
    frontProxyCert: path('front-proxy-client.crt'),
    frontProxyKey: path('front-proxy-client.key'),
    kubeletClientCert: path('apiserver-kubelet-client.crt'),
    kubeletClientKey: path('apiserver-kubelet-client.key'),
    serviceAccountKey: path('sa.key'),
    serviceAccountPub: path('sa.pub'),
    adminToken,
    tokenFile: path('tokens.csv'),
  };
}

/**
 * Issues `<name>.crt` and `<name>.key` in `dir` (which holds the CA of {@link createPki}): a
 * serving certificate for 127.0.0.1 that the apiserver trusts, as it trusts its kubelets'.
 */
export async function issueLoopbackCertificate(
  dir: string,
  name: string,
): Promise<{ cert: string; key: string }> {
  return issueCertificate({ caCert: join(dir, 'ca.crt'), caKey: join(dir, 'ca.key') }, dir, {
    name,
    subject: `/CN=${name}`,
    altNames: ['IP:127.0.0.1', 'DNS:localhost'],
  });
}

/**
 * Issues `<name>.crt` and `<name>.key` in `dir`, signed by the cluster CA: a client certificate
 * (the subject's CN is the user, each O a group) and, with `altNames`, a serving one too.
 */
export async function issueCertificate(
  ca: Pick<Pki, 'caCert' | 'caKey'>,
  dir: string,
  options: { name: string; subject: string; altNames?: readonly string[] },
): Promise<{ cert: string; key: string }> {
  const path = (file: string): string => join(dir, file);
  const { name } = options;
  const openssl = (...args: string[]): Promise<unknown> => run('openssl', args);
  // An EC key: generated in milliseconds, where another RSA key would slow every cluster start.
  await openssl(
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-subj',
    options.subject,
    '-keyout',
    path(`${name}.key`),
    '-out',
    path(`${name}.csr`),
  );
  const extensions = [
    ...(options.altNames === undefined ? [] : [`subjectAltName=${options.altNames.join(',')}`]),
    'extendedKeyUsage=serverAuth,clientAuth',
  ];
  await writeFile(path(`${name}.ext`), `${extensions.join('\n')}\n`);
  await openssl(
    'x509',
    '-req',
    '-in',
    path(`${name}.csr`),
    '-CA',
    ca.caCert,
    '-CAkey',
    ca.caKey,
    '-CAcreateserial',
    '-days',
    '30',
    '-extfile',
    path(`${name}.ext`),
    '-out',
    path(`${name}.crt`),
  );
  return { cert: path(`${name}.crt`), key: path(`${name}.key`) };
}

/** A kubeconfig that reaches `server` as the admin, trusting the test CA. */
export function adminKubeconfig(server: string, pki: Pki): string {
  return dump({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'ai-engine-manager', cluster: { server, 'certificate-authority': pki.caCert } }],
    users: [{ name: 'cluster-admin', user: { token: pki.adminToken } }],
    contexts: [
      { name: 'ai-engine-manager', context: { cluster: 'ai-engine-manager', user: 'cluster-admin' } },
    ],
    'current-context': 'ai-engine-manager',
  });
}
