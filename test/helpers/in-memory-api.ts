/**
 * The API's engine, profile and version handlers over the in-memory store, called directly (no
 * REST, no gRPC) with requests and responses in their JSON form: unit tests of the services'
 * rules without a cluster. The operator's reports are played through the store.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { ADMINISTER, type Authorizer, type Caller } from '../../gateway/src/auth/authorizer.ts';
import type { Handlers } from '../../gateway/src/call/handler.ts';
import { ApiError } from '../../gateway/src/errors/api-error.ts';
import { Code } from '../../gateway/src/errors/code.ts';
import { ROUTES } from '../../gateway/src/gen/routes.ts';
import { fromJson, toJson, type Json } from '../../gateway/src/json/canonical.ts';
import {
  daiEngineService,
  h2oEngineService,
  notebookEngineService,
} from '../../gateway/src/services/engine-kinds.ts';
import {
  daiEngineProfileService,
  h2oEngineProfileService,
  notebookEngineProfileService,
} from '../../gateway/src/services/profile-service.ts';
import {
  daiEngineVersionService,
  h2oEngineVersionService,
} from '../../gateway/src/services/version-service.ts';
import { InMemoryStore } from '../../gateway/src/store/memory-store.ts';
import type { PodLogSource } from '../../gateway/src/store/pod-logs.ts';
import type { ResourceKind } from '../../shared/resources.ts';

export const caller = (subject: string, roles: string[] = []): Caller => ({
  subject,
  displayName: `Name of ${subject}`,
  roles,
});

/** Every permission for everyone, but administering only for the role `admin`. */
const authorizer: Authorizer = {
  check: (who, permission) =>
    permission !== ADMINISTER || who.roles.includes('admin')
      ? Promise.resolve()
      : Promise.reject(new ApiError(Code.PERMISSION_DENIED, `${permission} denied`)),
  isAdministrator: (who) => Promise.resolve(who.roles.includes('admin')),
};

/** Engines have no pods here. */
const noPods: PodLogSource = {
  podsOf: () => Promise.resolve([]),
  read: () => Promise.reject(new Error('no pods')),
};

/** The failure of a call: its code, reason and message. */
export interface Failure {
  code: Code;
  reason: string;
  message: string;
}

export class InMemoryApi {
  readonly store = new InMemoryStore();
  private readonly handlers: Handlers;

  constructor() {
    // Where the resources live in a cluster: only pod logs would use it, and they are stubbed.
    const placement = { kubeConfig: new KubeConfig(), namespace: 'unit' };
    const deps = { store: Object.assign(this.store, placement), authorizer, podLogs: noPods };
    this.handlers = {
      ...daiEngineService(deps),
      ...h2oEngineService(deps),
      ...notebookEngineService(deps),
      ...daiEngineProfileService(deps),
      ...h2oEngineProfileService(deps),
      ...notebookEngineProfileService(deps),
      ...daiEngineVersionService(deps),
      ...h2oEngineVersionService(deps),
    };
  }

  /** One RPC of `service` (e.g. `DAIEngineService`) as `who`. */
  async call(who: Caller, service: string, rpc: string, request: Json): Promise<Record<string, Json>> {
    const route = ROUTES.find((r) => r.service === `ai.h2o.engine.v1.${service}` && r.rpc === rpc);
    const handler = this.handlers[`ai.h2o.engine.v1.${service}.${rpc}`];
    if (route === undefined || handler === undefined) throw new TypeError(`no ${service}.${rpc}`);
    return toJson(route.responseType, await handler(fromJson(route.requestType, request), { caller: who }));
  }

  /** How a call that must fail fails. */
  async fails(who: Caller, service: string, rpc: string, request: Json): Promise<Failure> {
    try {
      await this.call(who, service, rpc, request);
    } catch (error: unknown) {
      if (error instanceof ApiError)
        return { code: error.code, reason: error.reason, message: error.message };
      throw error;
    }
    throw new Error(`${rpc} succeeded`);
  }

  /** Plays the operator: reports an engine's state, as it does through the status subresource. */
  async report(kind: ResourceKind, name: string, state: string): Promise<void> {
    const current = await this.store.get(kind, name);
    const message = { ...toJson(kind.message, current.message), state, reconciling: false };
    await this.store.update(
      kind,
      fromJson(kind.message, message) as { name: string },
      current.resourceVersion,
      {
        intent: current.intent,
        statusFields: ['state', 'reconciling'],
      },
    );
  }
}
