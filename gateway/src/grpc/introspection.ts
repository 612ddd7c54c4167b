import { readFileSync } from 'node:fs';
import type { Server } from '@grpc/grpc-js';
import { HealthImplementation, type ServingStatusMap } from 'grpc-health-check';
import { addReflection } from './reflection.ts';

/** The API's file descriptors (and the health and reflection services'), written by `make generate`. */
const DESCRIPTORS = new URL('../gen/api.binpb', import.meta.url);

/**
 * Adds the standard gRPC health service (`grpc.health.v1.Health`, the overall status under "",
 * and each API service by its full name) and server reflection, so that grpcurl, grpc_cli and
 * Kubernetes gRPC probes work without copies of the .proto files.
 */
export function addIntrospection(server: Server, services: readonly string[]): HealthImplementation {
  const statuses: ServingStatusMap = { '': 'SERVING' };
  for (const name of services) statuses[name] = 'SERVING';
  const health = new HealthImplementation(statuses);
  health.addToServer(server);
  addReflection(server, readFileSync(DESCRIPTORS));
  return health;
}
