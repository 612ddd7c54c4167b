/**
 * Whether a ready engine really serves as a whole, asked of the engine itself before it is first
 * called RUNNING. H2O is why: H2O-3's readiness endpoint answers 200 on a node that found its
 * peers' addresses but has not merged with them yet, when it leads a cloud of one, so the pod
 * readiness a kind relies on can say "the leader alone is ready" a moment before the cloud has
 * formed (seen on a loaded two-core node). The answer is read here, purely; the GET is made at
 * the edge (`activity/prober.ts`).
 */
import { field, MalformedAnswer } from '../activity/activity-probe.ts';

/** One kind's check: the GET it makes under the engine's path, and what its answer must show. */
export interface ServingCheck<E> {
  /** Path under the engine's address path. */
  path: string;
  /**
   * Whether the answer (parsed JSON) shows the engine serving as a whole. Throws
   * {@link MalformedAnswer} when the answer is not what the engine serves.
   */
  serves(answer: unknown, engine: E): boolean;
}

/**
 * Whether H2O's `GET /3/Cloud` shows the cloud formed: every node of the engine in it, and the
 * nodes agreeing on its members (`consensus`).
 */
export function h2oCloudFormed(answer: unknown, nodeCount: number): boolean {
  const size = field(answer, 'cloud_size', 'the cloud');
  const consensus = field(answer, 'consensus', 'the cloud');
  if (typeof size !== 'number' || typeof consensus !== 'boolean')
    throw new MalformedAnswer('the cloud has no cloud_size number or consensus flag');
  return consensus && size >= nodeCount;
}
