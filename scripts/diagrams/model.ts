/**
 * What a diagram of the documentation is made of: boxes and arrows, described as data so that a
 * layout engine places them and one renderer draws them all alike (light and dark mode come from
 * the site's stylesheet, not from the drawing).
 */

/**
 * How a box looks, by what it stands for:
 * - `start`: where a lifecycle begins (a dot);
 * - `state`: an engine state on the way somewhere; `usable`: the state in which it is used;
 *   `failed`: a failure; `final`: an end nobody comes back from (double border);
 * - `component`: a part of the product; `external`: a caller or a service outside it (dashed);
 * - `check`: a question a request must pass; `refusal`: the answer when it does not; `allowed`;
 * - `group`: a box around other boxes (a cluster, a set of engines).
 */
export type NodeKind =
  | 'start'
  | 'state'
  | 'usable'
  | 'failed'
  | 'final'
  | 'component'
  | 'external'
  | 'check'
  | 'refusal'
  | 'allowed'
  | 'group';

export interface DiagramNode {
  id: string;
  /** What the box says; `\n` breaks lines. */
  label: string;
  kind: NodeKind;
  /** A smaller second line (what a component does). */
  detail?: string;
  /** Boxes inside a `group`. */
  children?: DiagramNode[];
}

export interface DiagramEdge {
  from: string;
  to: string;
  label?: string;
  /** `user`: a call someone makes (solid); `system`: what happens on its own (dashed). */
  by?: 'user' | 'system';
}

export interface Diagram {
  /** The file name under docs-site/src/diagrams/gen/, without `.svg`. */
  name: string;
  /** The accessible name: what the picture shows, in one sentence. */
  title: string;
  /** The alternative text: what a reader who cannot see the picture needs from it. */
  description: string;
  direction: 'DOWN' | 'RIGHT';
  nodes: DiagramNode[];
  edges: DiagramEdge[];
}
