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

interface Segment {
  /** The fence's language, for fenced blocks. */
  fence?: string;
  text: string;
  line: number;
}

/** Splits a page body into fenced blocks and the text between them. */
function segments(body: string): Segment[] {
  const lines = body.split('\n');
  const out: Segment[] = [];
  let start = 0;
  let i = 0;
  while (i < lines.length) {
    const open = FENCE.exec(lines[i] ?? '');
    if (!open) {
      i++;
      continue;
    }
    out.push({ text: lines.slice(start, i).join('\n'), line: start });
    const ticks = open[1] ?? '```';
    const close = lines.findIndex((l, j) => j > i && l.startsWith(ticks));
    const end = close === -1 ? lines.length : close;
    const fence = (open[2] ?? '').trim().split(/\s+/)[0] ?? '';
    out.push({ fence, text: lines.slice(i + 1, end).join('\n'), line: i });
    i = end + 1;
    start = i;
  }
  out.push({ text: lines.slice(start).join('\n'), line: start });
  return out;
}

const TABLE_KINDS = ['Parameter', 'Attribute', 'Method', 'Member'];

/** Reads one page, segment by segment, collecting what it states. */
class PageReader {
  readonly claims: Claim[] = [];
  readonly problems: string[] = [];
  private readonly declared = new Set<string>();
  private readonly calls: [string, string][] = [];
  private owners: Record<string, string | undefined> = {};
  private readonly page: string;
  private readonly module: string | undefined;
  private readonly offset: number;

  constructor(page: string, data: FrontMatter, offset: number) {
    this.page = page;
    this.module = data.python_module;
    this.offset = offset;
    for (const name of data.python_names ?? []) this.declare({ kind: 'name', target: name, page }, name);
  }

  private declare(claim: Claim, name: string): void {
    this.claims.push(claim);
    this.declared.add(name.slice(name.lastIndexOf('.') + 1));
  }

  private at(line: number): string {
    return `${this.page}:${line + this.offset + 1}`;
  }

  read(segment: Segment): void {
    if (segment.fence === 'signature') this.signature(segment);
    else if (segment.fence === undefined) this.prose(segment);
  }

  private signature(segment: Segment): void {
    if (this.module === undefined) {
      this.problems.push(
        `${this.at(segment.line)}: a signature block needs python_module in the front matter`,
      );
      return;
    }
    const block = signatureBlock(this.module, segment.text, this.page);
    this.claims.push(...block.claims);
    for (const name of block.declared) this.declared.add(name);
    this.owners = {
      Parameter: block.callable ?? this.owners['Parameter'],
      Attribute: block.owner === undefined ? this.owners['Attribute'] : classOf(this.module, block.owner),
      Member: block.enum ?? this.owners['Member'],
    };
    this.owners['Method'] = this.owners['Attribute'];
  }

  private prose(segment: Segment): void {
    let header: string | undefined;
    for (const line of segment.text.split('\n')) {
      if (!line.startsWith('|')) header = undefined;
      else if (header === undefined) header = /^\|\s*([A-Za-z]+)\s*\|/.exec(line)?.[1] ?? '';
      else this.row(header, line, segment.line);
    }
    for (const call of segment.text.matchAll(CALL_SPAN)) this.calls.push([call[1] ?? '', call[2] ?? '']);
  }

  /** One row of a Parameter, Attribute, Method or Member table. */
  private row(header: string, line: string, segmentLine: number): void {
    const cell = FIRST_CODE_CELL.exec(line)?.[1];
    if (cell === undefined || !TABLE_KINDS.includes(header)) return;
    const owner = this.owners[header];
    if (owner === undefined) {
      this.problems.push(`${this.at(segmentLine)}: a ${header} table must follow a signature block`);
      return;
    }
    const claim: Claim =
      header === 'Parameter'
        ? { kind: 'parameter', target: owner, name: cell, page: this.page }
        : { kind: 'name', target: `${owner}.${cell}`, page: this.page };
    this.declare(claim, cell);
  }

  /** Calls written in code spans that nothing on the page declares. */
  undeclaredCalls(): string[] {
    return this.calls
      .filter(([, name]) => !this.declared.has(name))
      .map(([call]) => `${this.page}: \`${call}()\` is not declared in python_names or a signature block`);
  }
}

/** The claims one page makes, `page` naming it in messages. */
export function pageClaims(page: string, text: string): PageClaims {
  const { data, body, offset } = frontMatter(text);
  const reader = new PageReader(page, data, offset);
  for (const segment of segments(body)) reader.read(segment);
  return { claims: reader.claims, problems: [...reader.problems, ...reader.undeclaredCalls()] };
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
