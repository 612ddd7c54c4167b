/**
 * The drawing of a diagram: every box and label is in it as text, escaped; arrows end in an
 * arrowhead at their target; it names itself for assistive technology; nothing lies outside it.
 */
import { expect, test } from '@jest/globals';
import { DIAGRAMS } from './definitions.ts';
import { layout, nodeSize } from './layout.ts';
import type { Diagram } from './model.ts';
import { renderSvg } from './svg.ts';
import { textWidth } from './text-width.ts';

const SAMPLE: Diagram = {
  name: 'sample',
  title: 'A <sample> & "its" title',
  description: 'Two boxes, one arrow between them.',
  direction: 'DOWN',
  nodes: [
    { id: 'a', label: 'A & B', kind: 'state', detail: 'x < y' },
    { id: 'b', label: 'DONE', kind: 'final' },
  ],
  edges: [{ from: 'a', to: 'b', label: 'go', by: 'system' }],
};

test('the drawing escapes text, carries its title and description, and gives each shape a class', async () => {
  const svg = renderSvg(SAMPLE, await layout(SAMPLE));
  expect(svg).toMatch(/^<svg [^>]*role="img"/);
  expect(svg).toContain('<title>A &#60;sample&#62; &#38; &#34;its&#34; title</title>');
  expect(svg).toContain('<desc>Two boxes, one arrow between them.</desc>');
  expect(svg).toContain('>A &#38; B</text>');
  expect(svg).toContain('>x &#60; y</text>');
  expect(svg).toContain('class="diagram-edge diagram-edge--system"');
  // A final state has a double border.
  expect(svg.match(/class="diagram-box-inner"/g)).toHaveLength(1);
  expect(svg).not.toMatch(/fill="#|stroke="#|style=/);
});

test('an arrow ends at its target box, with an arrowhead pointing into it', async () => {
  const placed = await layout(SAMPLE);
  const target = placed.nodes.find((p) => p.node.id === 'b');
  const end = placed.edges[0]?.points.at(-1);
  expect(target).toBeDefined();
  expect(end).toBeDefined();
  if (target === undefined || end === undefined) return;
  // Downward: the arrow reaches the target's top edge, within its width.
  expect(end.y).toBeCloseTo(target.y, 0);
  expect(end.x).toBeGreaterThanOrEqual(target.x);
  expect(end.x).toBeLessThanOrEqual(target.x + target.width);
  const svg = renderSvg(SAMPLE, placed);
  const arrow = /<polygon points="([^"]+)" class="diagram-arrow"\/>/.exec(svg)?.[1]?.split(' ')[0];
  expect(arrow).toBe(`${Math.round(end.x * 10) / 10},${Math.round(end.y * 10) / 10}`);
});

test('a box is wide enough for its longest line, and text width grows with the text', () => {
  const node = {
    id: 'x',
    label: 'Policy grants the permission here?',
    detail: 'short',
    kind: 'check' as const,
  };
  expect(nodeSize(node).width).toBeGreaterThan(textWidth(node.label, 14));
  expect(textWidth('MMMM', 14)).toBeGreaterThan(textWidth('iiii', 14));
  expect(textWidth('', 14)).toBe(0);
});

test.each(DIAGRAMS.map((diagram) => [diagram.name, diagram] as const))(
  '%s: every box and arrow lies within the drawing, and boxes do not overlap',
  async (_name, diagram) => {
    const placed = await layout(diagram);
    const inside = (x: number, y: number) => x >= 0 && y >= 0 && x <= placed.width && y <= placed.height;
    for (const p of placed.nodes)
      expect(inside(p.x + p.width, p.y + p.height) && inside(p.x, p.y)).toBe(true);
    for (const e of placed.edges) {
      expect(e.points.length).toBeGreaterThanOrEqual(2);
      for (const point of e.points) expect(inside(point.x, point.y)).toBe(true);
    }
    const leaves = placed.nodes.filter((p) => p.node.kind !== 'group');
    const overlaps = leaves.flatMap((a, i) =>
      leaves
        .slice(i + 1)
        .filter(
          (b) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height,
        )
        .map((b) => `${a.node.id}/${b.node.id}`),
    );
    expect(overlaps).toEqual([]);
  },
);
