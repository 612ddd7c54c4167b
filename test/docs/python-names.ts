/**
 * What the documentation pages state about the Python client, as claims that
 * test/docs/python_names.py checks against the installed package.
 *
 * The pages' conventions:
 * - Front matter `python_module`: the module a reference page documents. Names in its signature
 *   blocks are relative to it.
 * - Fenced blocks of language `signature`: one callable (`Class.method(params) -> type`, as
 *   `python_names.py --render` prints it), one enum (`enum Name:` and one member per line), or
 *   attribute lines (`Class.attribute: type`).
 * - Tables whose first header is `Parameter`, `Attribute`, `Method` or `Member` name, in their
 *   first column, parameters of the last callable block, attributes or methods of the last class
 *   a block named, or members of the last enum.
 * - Front matter `python_names`: full dotted names of everything else the page mentions.
 * - An inline code span written as a call, `pause()` or `engine.pause()`, must name something
 *   the page declares in one of the ways above.
 */
import yaml from 'js-yaml';

export type Claim =
  | { kind: 'name'; target: string; page: string }
  | { kind: 'signature'; target: string; text: string; page: string }
  | { kind: 'enum'; target: string; members: string[]; page: string }
  | { kind: 'parameter'; target: string; name: string; page: string };

export interface PageClaims {
  claims: Claim[];
  /** Problems found without the package: undeclared calls, blocks without a module. */
  problems: string[];
}

interface FrontMatter {
  python_module?: string;
  python_names?: string[];
}

const FENCE = /^(`{3,})(.*)$/;
const CALL_SPAN = /`((?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*))\(\)`/g;
const FIRST_CODE_CELL = /^\|\s*`([A-Za-z_]\w*)`/;

function frontMatter(text: string): { data: FrontMatter; body: string; offset: number } {
  const match = /^---\n([\s\S]*?)\n---\n/.exec(text);
  if (!match) return { data: {}, body: text, offset: 0 };
  const data = (yaml.load(match[1] ?? '') ?? {}) as FrontMatter;
  return { data, body: text.slice(match[0].length), offset: match[0].split('\n').length - 1 };
}

/** Splits a page body into fenced blocks and the text between them. */
function segments(body: string): { fence?: string; text: string; line: number }[] {
  const lines = body.split('\n');
  const out: { fence?: string; text: string; line: number }[] = [];
  let prose: string[] = [];
  let proseStart = 0;
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i] ?? '');
    if (!open) {
      prose.push(lines[i] ?? '');
      continue;
    }
    out.push({ text: prose.join('\n'), line: proseStart });
    const ticks = open[1] ?? '```';
    const start = i;
    const content: string[] = [];
    while (++i < lines.length && !(lines[i] ?? '').startsWith(ticks)) content.push(lines[i] ?? '');
    out.push({ fence: (open[2] ?? '').trim().split(/\s+/)[0] ?? '', text: content.join('\n'), line: start });
    prose = [];
    proseStart = i + 1;
  }
  out.push({ text: prose.join('\n'), line: proseStart });
  return out;
}

/** The claims one page makes, `page` naming it in messages. */
export function pageClaims(page: string, text: string): PageClaims {
  const { data, body, offset } = frontMatter(text);
  const claims: Claim[] = [];
  const problems: string[] = [];
  const declared = new Set<string>();
  const module = data.python_module;
  const at = (line: number): string => `${page}:${line + offset + 1}`;
  for (const name of data.python_names ?? []) {
    claims.push({ kind: 'name', target: name, page });
    declared.add(name.slice(name.lastIndexOf('.') + 1));
  }
  let lastCallable: string | undefined;
  let lastClass: string | undefined;
  let lastEnum: string | undefined;
  const calls: [string, string][] = [];
  for (const segment of segments(body)) {
    if (segment.fence === 'signature') {
      if (module === undefined) {
        problems.push(`${at(segment.line)}: a signature block needs python_module in the front matter`);
        continue;
      }
      const block = signatureBlock(module, segment.text, page);
      claims.push(...block.claims);
      for (const name of block.declared) declared.add(name);
      if (block.callable !== undefined) lastCallable = block.callable;
      if (block.owner !== undefined) lastClass = classOf(module, block.owner);
      if (block.enum !== undefined) lastEnum = block.enum;
      continue;
    }
    if (segment.fence !== undefined) continue;
    let header: string | undefined;
    for (const line of segment.text.split('\n')) {
      if (!line.startsWith('|')) {
        header = undefined;
        continue;
      }
      if (header === undefined) {
        header = /^\|\s*([A-Za-z]+)\s*\|/.exec(line)?.[1] ?? '';
        continue;
      }
      const cell = FIRST_CODE_CELL.exec(line)?.[1];
      if (cell === undefined || !['Parameter', 'Attribute', 'Method', 'Member'].includes(header)) continue;
      const owners: Record<string, string | undefined> = {
        Parameter: lastCallable,
        Attribute: lastClass,
        Method: lastClass,
        Member: lastEnum,
      };
      const owner = owners[header];
      if (owner === undefined) {
        problems.push(`${at(segment.line)}: a ${header} table must follow a signature block`);
        continue;
      }
      declared.add(cell);
      if (header === 'Parameter') claims.push({ kind: 'parameter', target: owner, name: cell, page });
      else claims.push({ kind: 'name', target: `${owner}.${cell}`, page });
    }
    calls.push(...[...segment.text.matchAll(CALL_SPAN)].map((call) => [call[1] ?? '', call[2] ?? '']));
  }
  for (const [call, name] of calls) {
    if (!declared.has(name))
      problems.push(`${page}: \`${call}()\` is not declared in python_names or a signature block`);
  }
  return { claims, problems };
}

/** The class part of a callable target: `mod.Class.method` -> `mod.Class`, `mod.Class` stays. */
function classOf(module: string, target: string): string {
  const relative = target.slice(module.length + 1).split('.');
  return `${module}.${relative[0] ?? ''}`;
}

function signatureBlock(
  module: string,
  text: string,
  page: string,
): { claims: Claim[]; declared: string[]; callable?: string; owner?: string; enum?: string } {
  const trimmed = text.trim();
  const enumHead = /^enum\s+([\w.]+):/.exec(trimmed);
  if (enumHead) {
    const target = `${module}.${enumHead[1] ?? ''}`;
    const members = trimmed
      .split('\n')
      .slice(1)
      .map((m) => m.trim())
      .filter(Boolean);
    return { claims: [{ kind: 'enum', target, members, page }], declared: members, enum: target };
  }
  const call = /^([\w.]+)\(/.exec(trimmed);
  if (call) {
    const label = call[1] ?? '';
    const target = `${module}.${label}`;
    return {
      claims: [{ kind: 'signature', target, text: trimmed, page }],
      declared: [label.slice(label.lastIndexOf('.') + 1)],
      callable: target,
      owner: target,
    };
  }
  const claims: Claim[] = [];
  const declared: string[] = [];
  let owner: string | undefined;
  for (const line of trimmed.split('\n')) {
    const name = /^([\w.]+)\s*:/.exec(line.trim())?.[1];
    if (name === undefined) continue;
    claims.push({ kind: 'name', target: `${module}.${name}`, page });
    declared.push(name.slice(name.lastIndexOf('.') + 1));
    owner ??= `${module}.${name}`;
  }
  return { claims, declared, ...(owner === undefined ? {} : { owner }) };
}
