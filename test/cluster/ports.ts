import { createServer } from 'node:net';

/**
 * Asks the kernel for a free TCP port on a loopback address.
 *
 * The port is released before it is used, so another program could take it in between; every
 * component binds within a second of this call, and two clusters never ask for the same port
 * at once because the kernel hands out ports in rotation.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error('Listening socket has no port'));
        return;
      }
      server.close(() => {
        resolve(address.port);
      });
    });
  });
}
