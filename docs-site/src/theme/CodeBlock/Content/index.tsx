/**
 * The theme's highlighted lines of a code block, rendered again only when the code changes.
 * The block's context also carries the word-wrap state, which changes once the page has started
 * (most blocks are wider than a phone, so the wrap button appears): in the theme that rendered
 * every line of every block again, in one long task. The lines read only the metadata and the
 * block's element from that context (the wrap button styles the code element itself), so here
 * they get a context of their own with just what they read, and skip the renders it leaves alone.
 */
import { memo, useState, type ReactNode } from 'react';
import {
  CodeBlockContextProvider,
  useCodeBlockContext,
  type CodeBlockMetadata,
} from '@docusaurus/theme-common/internal';
import type { Props } from '@theme/CodeBlock/Content';
import OriginalContent from '@theme-original/CodeBlock/Content';

type WordWrap = ReturnType<typeof useCodeBlockContext>['wordWrap'];

const Lines = memo(function Lines({
  className,
  metadata,
  wordWrap,
}: {
  className: string | undefined;
  metadata: CodeBlockMetadata;
  wordWrap: WordWrap;
}): ReactNode {
  return (
    <CodeBlockContextProvider metadata={metadata} wordWrap={wordWrap}>
      <OriginalContent className={className} />
    </CodeBlockContextProvider>
  );
});

export default function CodeBlockContent({ className }: Props): ReactNode {
  const { metadata, wordWrap } = useCodeBlockContext();
  // The first word-wrap state, kept: its element ref is the one the lines need, and it never
  // changes; its other fields are read by the buttons, from the block's own context.
  const [linesWordWrap] = useState(wordWrap);
  return <Lines className={className} metadata={metadata} wordWrap={linesWordWrap} />;
}
