/**
 * The state diagrams draw the states the API reports, no more and no fewer, and every arrow
 * joins boxes that exist.
 */
import { describe, expect, test } from '@jest/globals';
import { DAIEngine_State } from '../../gateway/src/gen/ai/h2o/engine/v1/dai_engine.pb.ts';
import { H2OEngine_State } from '../../gateway/src/gen/ai/h2o/engine/v1/h2o_engine.pb.ts';
import { NotebookEngine_State } from '../../gateway/src/gen/ai/h2o/engine/v1/notebook_engine.pb.ts';
import { EngineQueueStatus_State } from '../../gateway/src/gen/ai/h2o/engine/v1/engine_queue_status.pb.ts';
import {
  DAI_ENGINE_STATES,
  DIAGRAMS,
  ENGINE_QUEUE_STATES,
  H2O_ENGINE_STATES,
  NOTEBOOK_ENGINE_STATES,
} from './definitions.ts';
import type { Diagram, DiagramNode } from './model.ts';

/** The API's states of a kind, as the diagrams spell them (without the STATE_ prefix). */
function apiStates(states: Record<string, number>, unused: readonly string[] = []): string[] {
  return Object.keys(states)
    .filter((name) => !['STATE_UNSPECIFIED', 'UNRECOGNIZED', ...unused].includes(name))
    .map((name) => name.replace(/^STATE_/, ''))
    .sort();
}

const allNodes = (nodes: readonly DiagramNode[]): DiagramNode[] =>
  nodes.flatMap((node) => [node, ...allNodes(node.children ?? [])]);

/** The boxes of a state diagram that are states (not the start, 'any state' or 'gone'). */
const drawnStates = (diagram: Diagram): string[] =>
  allNodes(diagram.nodes)
    .filter((node) => /^[A-Z]+$/.test(node.label))
    .map((node) => node.label)
    .sort();

describe('state diagrams', () => {
  test('the DAI engine diagram draws every DAI engine state', () => {
    expect(drawnStates(DAI_ENGINE_STATES)).toEqual(apiStates(DAIEngine_State));
  });

  test('the notebook engine diagram draws every notebook engine state but TERMINATED, which the service never reports', () => {
    expect(drawnStates(NOTEBOOK_ENGINE_STATES)).toEqual(
      apiStates(NotebookEngine_State, ['STATE_TERMINATED']),
    );
  });

  test('the H2O engine diagram draws every H2O engine state but the deprecated PAUSING and PAUSED', () => {
    expect(drawnStates(H2O_ENGINE_STATES)).toEqual(
      apiStates(H2OEngine_State, ['STATE_PAUSING', 'STATE_PAUSED']),
    );
  });

  test('the queue diagram draws every queue state, and for each the engine states it names exist', () => {
    expect([...new Set(drawnStates(ENGINE_QUEUE_STATES))].sort()).toEqual(apiStates(EngineQueueStatus_State));
    const engineStates = new Set([
      ...apiStates(DAIEngine_State),
      ...apiStates(H2OEngine_State),
      ...apiStates(NotebookEngine_State),
    ]);
    const named = allNodes(ENGINE_QUEUE_STATES.nodes).flatMap(
      (node) => node.detail?.match(/\b[A-Z]{4,}\b/g) ?? [],
    );
    expect(named.filter((state) => !engineStates.has(state))).toEqual([]);
  });
});

test.each(DIAGRAMS.map((diagram) => [diagram.name, diagram] as const))(
  '%s: every arrow joins two boxes of the diagram, every box has an arrow, and it has alternative text',
  (_name, diagram) => {
    const ends = diagram.edges.flatMap((edge) => [edge.from, edge.to]);
    expect(ends.filter((id) => !allNodes(diagram.nodes).some((node) => node.id === id))).toEqual([]);
    // A box is joined by an arrow of its own or by one to the group around it.
    const unjoined = (nodes: readonly DiagramNode[]): string[] =>
      nodes
        .filter((node) => !ends.includes(node.id))
        .flatMap((node) => (node.kind === 'group' ? unjoined(node.children ?? []) : [node.id]));
    expect(unjoined(diagram.nodes)).toEqual([]);
    expect(new Set(allNodes(diagram.nodes).map((node) => node.id)).size).toBe(allNodes(diagram.nodes).length);
    expect(diagram.title.length).toBeGreaterThan(20);
    expect(diagram.description.length).toBeGreaterThan(diagram.title.length);
  },
);
