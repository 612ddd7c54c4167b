/**
 * The stored kinds with the API message each one holds. The store reads every resource into its
 * kind's message (`store/objects.ts`, by the message's field table), so the message a service
 * gets back for a kind is that kind's generated message type; {@link messageOf} is the one place
 * that says so, and every service reads stored messages through it.
 */
import { RESOURCE_KINDS, type ResourceKind } from '../../../shared/resources.ts';
import type { DAIEngine } from '../gen/ai/h2o/engine/v1/dai_engine.pb.ts';
import type { DAIEngineProfile } from '../gen/ai/h2o/engine/v1/dai_engine_profile.pb.ts';
import type { DAIEngineVersion } from '../gen/ai/h2o/engine/v1/dai_engine_version.pb.ts';
import type { H2OEngine } from '../gen/ai/h2o/engine/v1/h2o_engine.pb.ts';
import type { H2OEngineProfile } from '../gen/ai/h2o/engine/v1/h2o_engine_profile.pb.ts';
import type { H2OEngineVersion } from '../gen/ai/h2o/engine/v1/h2o_engine_version.pb.ts';
import type { NotebookEngine } from '../gen/ai/h2o/engine/v1/notebook_engine.pb.ts';
import type { NotebookEngineImage } from '../gen/ai/h2o/engine/v1/notebook_engine_image.pb.ts';
import type { NotebookEngineProfile } from '../gen/ai/h2o/engine/v1/notebook_engine_profile.pb.ts';
import type { SandboxEngine } from '../gen/ai/h2o/engine/v1/sandbox_engine.pb.ts';
import type { SandboxEngineImage } from '../gen/ai/h2o/engine/v1/sandbox_engine_image.pb.ts';
import type { SandboxEngineTemplate } from '../gen/ai/h2o/engine/v1/sandbox_engine_template.pb.ts';
import type { Intent } from '../store/objects.ts';
import type { Stored } from '../store/store.ts';

/** A stored kind whose resources are messages of type `M`. */
export interface MessageKind<M> extends ResourceKind {
  /** Never set: it only carries `M`, so that reads of the kind are typed by it. */
  readonly messageType?: M;
}

interface KindMessages {
  DAIEngine: DAIEngine;
  H2OEngine: H2OEngine;
  NotebookEngine: NotebookEngine;
  DAIEngineProfile: DAIEngineProfile;
  H2OEngineProfile: H2OEngineProfile;
  NotebookEngineProfile: NotebookEngineProfile;
  DAIEngineVersion: DAIEngineVersion;
  H2OEngineVersion: H2OEngineVersion;
  NotebookEngineImage: NotebookEngineImage;
  SandboxEngine: SandboxEngine;
  SandboxEngineImage: SandboxEngineImage;
  SandboxEngineTemplate: SandboxEngineTemplate;
}

/** Every stored kind, with its message type. */
export const MESSAGE_KINDS: { readonly [K in keyof KindMessages]: MessageKind<KindMessages[K]> } =
  RESOURCE_KINDS;

/** A stored message of a known type, with the resourceVersion that guards its next update. */
export interface StoredMessage<M> {
  message: M;
  resourceVersion: string;
  /** An engine's wanted lifecycle; empty for other kinds. */
  intent: Intent;
}

/** What the store answered for a resource of `kind`, typed as the kind's message. */
export function messageOf<M>(kind: MessageKind<M>, stored: Stored): StoredMessage<M> {
  const message: object = stored.message;
  return {
    // The store decoded the resource with the field table of `kind.message`.
    message: message as M,
    resourceVersion: stored.resourceVersion,
    intent: stored.intent,
  };
}
