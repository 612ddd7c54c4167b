/**
 * Places a diagram's boxes and routes its arrows with ELK's layered layout (the Eclipse Layout
 * Kernel), then flattens the result to absolute coordinates for the renderer.
 */
import elk from 'elkjs/lib/elk.bundled.js';
import type { ElkExtendedEdge, ElkNode } from 'elkjs/lib/elk-api.js';
import type { Diagram, DiagramEdge, DiagramNode } from './model.ts';
import { textWidth } from './text-width.ts';

export const FONT = { label: 14, detail: 12, edge: 12 } as const;
const LINE = { label: 18, detail: 16 } as const;
const PAD = { x: 14, y: 9 } as const;
/** The dot of a `start` box and the gap to its label. */
export const START_DOT = 14;
const START_GAP = 6;

export interface Point {
  x: number;
  y: number;
}
export interface Box extends Point {
  width: number;
  height: number;
}
export interface PlacedNode extends Box {
  node: DiagramNode;
}
export interface PlacedEdge {
  edge: DiagramEdge;
  points: Point[];
  label?: Box;
}
export interface Placed {
  width: number;
  height: number;
  /** Groups first, so that they are drawn below what they hold. */
  nodes: PlacedNode[];
  edges: PlacedEdge[];
}

/** A box's size from its text (groups get theirs from what they hold). */
export function nodeSize(node: DiagramNode): { width: number; height: number } {
  const lines = node.label.split('\n');
  if (node.kind === 'start')
    return { width: START_DOT + START_GAP + textWidth(node.label, FONT.label), height: LINE.label };
  const widest = Math.max(
    ...lines.map((line) => textWidth(line, FONT.label)),
    node.detail === undefined ? 0 : textWidth(node.detail, FONT.detail),
  );
  const height = lines.length * LINE.label + (node.detail === undefined ? 0 : LINE.detail);
  return { width: widest + 2 * PAD.x, height: height + 2 * PAD.y };
}

function elkNode(node: DiagramNode): ElkNode {
  if (node.kind !== 'group') return { id: node.id, ...nodeSize(node) };
  return {
    id: node.id,
    layoutOptions: { 'elk.padding': '[top=34,left=14,bottom=14,right=14]' },
    children: (node.children ?? []).map(elkNode),
  };
}

const edgeId = (index: number) => `edge${index}`;

function elkEdge(edge: DiagramEdge, index: number): ElkExtendedEdge {
  const labels =
    edge.label === undefined
      ? []
      : [{ text: edge.label, width: textWidth(edge.label, FONT.edge) + 8, height: LINE.detail }];
  return { id: edgeId(index), sources: [edge.from], targets: [edge.to], labels };
}

const LAYOUT_OPTIONS = {
  'elk.algorithm': 'layered',
  'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
  'elk.edgeRouting': 'ORTHOGONAL',
  'elk.edgeLabels.placement': 'CENTER',
  'elk.layered.nodePlacement.strategy': 'NETWORK_SIMPLEX',
  // Boxes keep the order the definition gives them: a lifecycle reads from its first state
  // down, and the arrows that go back up (resume) are the ones drawn against the flow.
  'elk.layered.cycleBreaking.strategy': 'MODEL_ORDER',
  'elk.layered.considerModelOrder.strategy': 'NODES_AND_EDGES',
  'elk.layered.spacing.nodeNodeBetweenLayers': '36',
  'elk.layered.spacing.edgeNodeBetweenLayers': '18',
  'elk.spacing.nodeNode': '28',
  'elk.spacing.edgeEdge': '14',
  'elk.spacing.edgeNode': '14',
  'elk.spacing.edgeLabel': '3',
  'elk.padding': '[top=8,left=8,bottom=8,right=8]',
};

/** Every laid-out node with its absolute position, parents before children. */
function flatten(node: ElkNode, origin: Point, out: Map<string, Box>): void {
  for (const child of node.children ?? []) {
    const at = positionOf(child);
    const box = { x: origin.x + at.x, y: origin.y + at.y, ...sizeOf(child) };
    out.set(child.id, box);
    flatten(child, box, out);
  }
}

function allEdges(node: ElkNode): ElkExtendedEdge[] {
  return [...(node.edges ?? []), ...(node.children ?? []).flatMap(allEdges)];
}

function byId(nodes: readonly DiagramNode[]): Map<string, DiagramNode> {
  return new Map(nodes.flatMap((node) => [[node.id, node] as const, ...byId(node.children ?? [])]));
}

const positionOf = (shape: { x?: number; y?: number }): Point => ({ x: shape.x ?? 0, y: shape.y ?? 0 });
const sizeOf = (shape: { width?: number; height?: number }) => ({
  width: shape.width ?? 0,
  height: shape.height ?? 0,
});

/** Lays the diagram out. */
export async function layout(diagram: Diagram): Promise<Placed> {
  const graph: ElkNode = {
    id: 'root',
    layoutOptions: { ...LAYOUT_OPTIONS, 'elk.direction': diagram.direction },
    children: diagram.nodes.map(elkNode),
    edges: diagram.edges.map(elkEdge),
  };
  // A CommonJS module: its ES default export is the module object, whose `default` is ELK.
  const result = await new elk.default().layout(graph);
  const boxes = new Map<string, Box>([['root', { x: 0, y: 0, width: 0, height: 0 }]]);
  flatten(result, { x: 0, y: 0 }, boxes);
  const nodes = byId(diagram.nodes);
  const placedNodes = [...boxes].flatMap(([id, box]) => {
    const node = nodes.get(id);
    return node === undefined ? [] : [{ ...box, node }];
  });
  const edges = allEdges(result).map((elk): PlacedEdge => {
    const edge = diagram.edges[Number(elk.id.slice('edge'.length))];
    if (edge === undefined) throw new Error(`ELK returned an unknown edge ${elk.id}`);
    // Sections and labels are relative to the node the edge was placed in.
    const origin = boxes.get(elk.container ?? 'root') ?? { x: 0, y: 0 };
    const at = (p: Point) => ({ x: origin.x + p.x, y: origin.y + p.y });
    const points = (elk.sections ?? []).flatMap((s) => [
      at(s.startPoint),
      ...(s.bendPoints ?? []).map(at),
      at(s.endPoint),
    ]);
    const label = elk.labels?.[0];
    return {
      edge,
      points,
      ...(label === undefined ? {} : { label: { ...at(positionOf(label)), ...sizeOf(label) } }),
    };
  });
  return {
    width: Math.ceil(result.width ?? 0),
    height: Math.ceil(result.height ?? 0),
    nodes: placedNodes,
    edges,
  };
}
