/**
 * The stored records of one engine kind: each engine with the resourceVersion that guards its
 * next write and its wanted lifecycle (the intent). Reads and writes only; who may make them is
 * decided in `engine-permissions.ts`.
 */
import { MESSAGES } from '../gen/messages.ts';
import type { Held } from '../store/lease-lock.ts';
import type { Intent } from '../store/objects.ts';
import type { IndexSpec, OrderedRun } from '../list/ordered-index.ts';
import type { Store, Stored } from '../store/store-interface.ts';
import type { EngineMessage } from './engine-service.ts';
import { messageOf, type MessageKind, type StoredMessage } from './message-kinds.ts';

/** Status fields the gateway writes after creation; the operator owns the rest (state, urls…). */
const GATEWAY_STATUS = [
  'creator',
  'creatorDisplayName',
  'updater',
  'updaterDisplayName',
  'updateTime',
  'resumeTime',
  'profileInfo',
  'daiEngineVersionInfo',
  'h2oEngineVersionInfo',
  'notebookImageInfo',
];

/** A stored engine with the resourceVersion that guards its next write and its wanted lifecycle. */
export interface StoredEngine<E> {
  engine: E;
  resourceVersion: string;
  intent: Intent;
}

function storedEngine<E>(stored: StoredMessage<E>): StoredEngine<E> {
  return { engine: stored.message, resourceVersion: stored.resourceVersion, intent: stored.intent };
}

/** The state names of a kind's state enum, by value. */
function stateNamesOf(states: Readonly<Record<string, number>>): Record<number, string> {
  return Object.fromEntries(Object.entries(states).map(([name, value]) => [value, name]));
}

/** The state's name, however the stored message spells the enum. */
export function stateNameOf(states: Readonly<Record<number, string>>, state: EngineMessage['state']): string {
  return typeof state === 'string' ? state : (states[state] ?? 'STATE_UNSPECIFIED');
}

/** The engines of one kind as the store keeps them. */
export class EngineRecords<E extends EngineMessage> {
  private readonly store: Store;
  private readonly kind: MessageKind<E>;
  private readonly gatewayStatus: string[];
  private readonly stateNames: Record<number, string>;
  /** Whether the kind's engines can be shared with the workspace (notebook engines). */
  readonly shares: boolean;

  constructor(store: Store, kind: MessageKind<E>, states: Readonly<Record<string, number>>) {
    this.store = store;
    this.kind = kind;
    const fields = new Set((MESSAGES[kind.message] ?? []).map((f) => f.json));
    this.gatewayStatus = GATEWAY_STATUS.filter((f) => fields.has(f));
    this.shares = fields.has('shared');
    this.stateNames = stateNamesOf(states);
  }

  /** The value of the kind's state `name`; 0 (unspecified) for a name the kind lacks. */
  stateValue(name: string): number {
    const entry = Object.entries(this.stateNames).find(([, n]) => n === name);
    return entry === undefined ? 0 : Number(entry[0]);
  }

  stateName(engine: E): string {
    return stateNameOf(this.stateNames, engine.state);
  }

  async get(name: string): Promise<StoredEngine<E>> {
    return storedEngine(messageOf(this.kind, await this.store.get(this.kind, name)));
  }

  async all(workspace: string): Promise<StoredEngine<E>[]> {
    return (await this.store.list(this.kind, workspace)).map((s) => storedEngine(messageOf(this.kind, s)));
  }

  /**
   * The engines of a workspace (or `-`) that `spec` puts in `group`, in its order (see
   * Store.ordered). The run may be live: read it before anything awaits.
   */
  async ordered(workspace: string, spec: IndexSpec<E>, group: string): Promise<OrderedRun<E>> {
    const message = (stored: Stored): E => messageOf(this.kind, stored).message;
    const run = await this.store.ordered(
      this.kind,
      workspace,
      {
        id: spec.id,
        key: (stored) => spec.key(message(stored)),
        compare: (a, b) => spec.compare(a, b),
        group: (stored) => spec.group(message(stored)),
      },
      group,
    );
    return {
      get size() {
        return run.size;
      },
      at: (index) => {
        const stored = run.at(index);
        return stored === undefined ? undefined : message(stored);
      },
      after: (key) => run.after(key),
    };
  }

  /** {@link all}, for a decision taken under a lock: including what the previous holder wrote. */
  async allHeld(workspace: string, held: Held): Promise<StoredEngine<E>[]> {
    return (await this.store.listHeld(this.kind, workspace, held)).map((s) =>
      storedEngine(messageOf(this.kind, s)),
    );
  }

  async create(engine: E, intent: Intent): Promise<StoredEngine<E>> {
    return storedEngine(messageOf(this.kind, await this.store.create(this.kind, engine, { intent })));
  }

  /**
   * Writes a change; the status keeps what the operator reported, except `alsoStatus` fields
   * the change itself decides (a lifecycle call's transitional state).
   */
  async save(
    engine: E,
    resourceVersion: string,
    intent: Intent,
    alsoStatus: readonly string[] = [],
  ): Promise<E> {
    return (await this.write(engine, resourceVersion, intent, alsoStatus)).engine;
  }

  /** {@link save}, answering the stored engine with its new resourceVersion. */
  async write(
    engine: E,
    resourceVersion: string,
    intent: Intent,
    alsoStatus: readonly string[] = [],
  ): Promise<StoredEngine<E>> {
    const stored = await this.store.update(this.kind, engine, resourceVersion, {
      intent,
      statusFields: [...this.gatewayStatus, ...alsoStatus],
    });
    return storedEngine(messageOf(this.kind, stored));
  }

  delete(name: string, resourceVersion: string): Promise<void> {
    return this.store.delete(this.kind, name, resourceVersion);
  }

  /** Sets annotations on the engine's object, e.g. the time of its user's latest activity. */
  annotate(name: string, annotations: Readonly<Record<string, string>>): Promise<void> {
    return this.store.annotate(this.kind, name, annotations);
  }
}
