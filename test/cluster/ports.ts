import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * Ports are chosen below the kernel's ephemeral range: a port the kernel hands out for `listen(0)`
 * is free again the moment it is released, and while a component starts (a second later) any
 * outgoing connection of this machine may take it as its local port — with two test files running
 * at once, each making hundreds of connections, that happened ("address already in use"). Ports
 * below the range (and below Kubernetes' NodePorts) are never given to outgoing connections; two
 * callers picking the same one at random within that second is a chance of one in twenty thousand.
 */
const LOWEST = 10_000;
/** Kubernetes' NodePort range starts here; kube-proxy on the real node owns those ports. */
const NODE_PORTS = 30_000;

/** The first port of the kernel's ephemeral range (Linux), or the IANA range's start elsewhere. */
function ephemeralStart(): number {
  try {
    const [start] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    const port = Number(start);
    return Number.isInteger(port) && port > LOWEST + 1000 ? port : 49_152;
  } catch {
    return 49_152;
  }
}

const HIGHEST = Math.min(ephemeralStart(), NODE_PORTS) - 1;

/** Whether `port` can be listened on now. */
function canListen(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => {
      resolve(false);
    });
    server.listen(port, host, () => {
      server.close(() => {
        resolve(true);
      });
    });
  });
}

/**
 * A TCP port free on a loopback address now, below the ephemeral range (see above). It is
 * released before it is used; every component binds within a second of this call.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const port = LOWEST + Math.floor(Math.random() * (HIGHEST - LOWEST + 1));
    if (await canListen(port, host)) return port;
  }
  throw new Error(`No free port between ${LOWEST} and ${HIGHEST} on ${host} after 100 tries`);
}
