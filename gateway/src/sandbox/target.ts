import type { CallContext } from '../call/handler.ts';
import type { SandboxEngine } from '../gen/ai/h2o/engine/v1/sandbox_engine.pb.ts';

/** The container a sandbox engine runs in: where its commands are executed. */
export interface SandboxTarget {
  namespace: string;
  pod: string;
  container: string;
}

/**
 * Checks the engine exists, the caller may use it and it is RUNNING (throws the ApiError
 * otherwise), and says where it runs.
 */
export type ResolveSandbox = (engineName: string, context: CallContext) => Promise<SandboxTarget>;

/** {@link ResolveSandbox} for calls that also read the engine (its uid, its template's limits). */
export type ReachSandbox = (
  engineName: string,
  context: CallContext,
) => Promise<{ engine: SandboxEngine; target: SandboxTarget }>;
