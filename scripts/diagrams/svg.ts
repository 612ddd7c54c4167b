/**
 * Draws a laid-out diagram as SVG. Colours are not in the drawing: every shape carries a class,
 * and the site's stylesheet (docs-site/src/css/custom.css) paints them from its light or dark
 * palette. Arrowheads are drawn shapes rather than markers, since markers need document-wide ids
 * and a page may show several diagrams.
 */
import {
  FONT,
  START_DOT,
  type Box,
  type Placed,
  type PlacedEdge,
  type PlacedNode,
  type Point,
} from './layout.ts';
import type { Diagram } from './model.ts';

const ARROW = { length: 8, half: 4.5 } as const;

const escapeXml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const n = (value: number): string => String(Math.round(value * 10) / 10);

function text(at: Point, content: string, className: string, anchor = 'middle'): string {
  return `<text x="${n(at.x)}" y="${n(at.y)}" class="${className}" text-anchor="${anchor}" dominant-baseline="central">${escapeXml(content)}</text>`;
}

function rect(box: Box, className: string, radius: number): string {
  return `<rect x="${n(box.x)}" y="${n(box.y)}" width="${n(box.width)}" height="${n(box.height)}" rx="${radius}" class="${className}"/>`;
}

/** The lines a box shows, centred: its label, then its detail in smaller type. */
function boxText(placed: PlacedNode): string[] {
  const { node } = placed;
  const lines = [
    ...node.label.split('\n').map((line) => ({ line, size: FONT.label, className: 'diagram-text' })),
    ...(node.detail === undefined
      ? []
      : [{ line: node.detail, size: FONT.detail, className: 'diagram-detail' }]),
  ];
  const heights = lines.map(({ size }) => size + 4);
  const total = heights.reduce((a, b) => a + b, 0);
  let y = placed.y + (placed.height - total) / 2;
  return lines.map(({ line, className }, i) => {
    const height = heights[i] ?? 0;
    y += height;
    return text({ x: placed.x + placed.width / 2, y: y - height / 2 }, line, className);
  });
}

const RADIUS: Partial<Record<string, number>> = { check: 4, refusal: 14, allowed: 14, external: 6 };

function drawNode(placed: PlacedNode): string {
  const { node } = placed;
  switch (node.kind) {
    case 'start': {
      const middle = placed.y + placed.height / 2;
      return [
        `<circle cx="${n(placed.x + START_DOT / 2)}" cy="${n(middle)}" r="${START_DOT / 2}" class="diagram-start"/>`,
        text({ x: placed.x + START_DOT + 6, y: middle }, node.label, 'diagram-text', 'start'),
      ].join('');
    }
    case 'group':
      return [
        rect(placed, 'diagram-group', 10),
        text({ x: placed.x + 14, y: placed.y + 18 }, node.label, 'diagram-group-label', 'start'),
      ].join('');
    default: {
      const inset = { x: placed.x + 3, y: placed.y + 3, width: placed.width - 6, height: placed.height - 6 };
      return [
        rect(placed, `diagram-box diagram-box--${node.kind}`, RADIUS[node.kind] ?? 8),
        node.kind === 'final' ? rect(inset, 'diagram-box-inner', 6) : '',
        ...boxText(placed),
      ].join('');
    }
  }
}

/** The arrowhead at the end of a path, pointing along its last segment. */
function arrowhead(points: readonly Point[]): string {
  const tip = points.at(-1);
  const from = points.at(-2);
  if (tip === undefined || from === undefined) return '';
  const length = Math.hypot(tip.x - from.x, tip.y - from.y) || 1;
  const ux = (tip.x - from.x) / length;
  const uy = (tip.y - from.y) / length;
  const base = { x: tip.x - ux * ARROW.length, y: tip.y - uy * ARROW.length };
  const corners = [
    tip,
    { x: base.x - uy * ARROW.half, y: base.y + ux * ARROW.half },
    { x: base.x + uy * ARROW.half, y: base.y - ux * ARROW.half },
  ];
  return `<polygon points="${corners.map((p) => `${n(p.x)},${n(p.y)}`).join(' ')}" class="diagram-arrow"/>`;
}

function drawEdge({ edge, points, label }: PlacedEdge): string {
  const path = points.map((p, i) => `${i === 0 ? 'M' : 'L'}${n(p.x)} ${n(p.y)}`).join(' ');
  const style = edge.by === 'system' ? 'diagram-edge diagram-edge--system' : 'diagram-edge';
  return [
    `<path d="${path}" class="${style}"/>`,
    arrowhead(points),
    label === undefined || edge.label === undefined
      ? ''
      : rect(label, 'diagram-edge-label-background', 3) +
        text(
          { x: label.x + label.width / 2, y: label.y + label.height / 2 },
          edge.label,
          'diagram-edge-label',
        ),
  ].join('');
}

/** The diagram as a standalone SVG document, with its title and description for assistive technology. */
export function renderSvg(diagram: Diagram, placed: Placed): string {
  const groups = placed.nodes.filter((p) => p.node.kind === 'group');
  const boxes = placed.nodes.filter((p) => p.node.kind !== 'group');
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${placed.width} ${placed.height}" width="${placed.width}" height="${placed.height}" role="img" class="diagram diagram--${diagram.name}">`,
    `<title>${escapeXml(diagram.title)}</title>`,
    `<desc>${escapeXml(diagram.description)}</desc>`,
    ...groups.map(drawNode),
    ...placed.edges.map(drawEdge),
    ...boxes.map(drawNode),
    '</svg>',
    '',
  ].join('\n');
}
