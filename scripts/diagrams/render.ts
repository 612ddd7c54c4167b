/**
 * `make generate` (and `make docs`): draws every diagram of scripts/diagrams/definitions.ts into
 * docs-site/src/diagrams/gen/<name>.svg, which the pages import as inline SVG.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DIAGRAMS } from './definitions.ts';
import { layout } from './layout.ts';
import { renderSvg } from './svg.ts';

const OUT = join(resolve(dirname(fileURLToPath(import.meta.url)), '..', '..'), 'docs-site/src/diagrams/gen');

mkdirSync(OUT, { recursive: true });
// A diagram that was removed leaves no file behind.
for (const file of readdirSync(OUT)) rmSync(join(OUT, file));
for (const diagram of DIAGRAMS) {
  writeFileSync(join(OUT, `${diagram.name}.svg`), renderSvg(diagram, await layout(diagram)));
}
console.log(`${DIAGRAMS.length} diagrams drawn into ${OUT}`);
