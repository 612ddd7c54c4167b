/**
 * The highlighted lines of a code block, as the theme renders them, but rendered again only
 * when the code itself changes. The theme's lines read the word-wrap state and the colour mode
 * from context, and both change once the page has started (most blocks are wider than a phone,
 * so the wrap button appears; the colour mode settles from storage): each change rendered every
 * line of every block again, in one long task. Here the lines take only the parsed code and the
 * block's element ref, both stable, behind a memo; and the Prism theme is the one both modes
 * share (src/code-theme.ts), read from the configuration rather than per mode.
 */
import { memo, type ReactNode, type RefObject } from 'react';
import clsx from 'clsx';
import { useThemeConfig } from '@docusaurus/theme-common';
import { useCodeBlockContext, type CodeBlockMetadata } from '@docusaurus/theme-common/internal';
import type { Props } from '@theme/CodeBlock/Content';
import Line from '@theme/CodeBlock/Line';
import { Highlight } from 'prism-react-renderer';
// The theme's own classes, so that the block looks as the theme styles it.
import styles from '@docusaurus/theme-classic/lib/theme/CodeBlock/Content/styles.module.css';

interface LinesProps {
  className: string | undefined;
  metadata: CodeBlockMetadata;
  codeBlockRef: RefObject<HTMLPreElement | null>;
}

const Lines = memo(function Lines({ className, metadata, codeBlockRef }: LinesProps): ReactNode {
  const { prism } = useThemeConfig();
  const { code, language, lineNumbersStart, lineClassNames } = metadata;
  const numbered = lineNumbersStart !== undefined;
  return (
    <Highlight theme={prism.theme} code={code} language={language}>
      {({ className: highlighted, style, tokens, getLineProps, getTokenProps }) => (
        <pre
          ref={codeBlockRef}
          // Scrollable by keyboard when the code is wider than the block.
          tabIndex={0}
          className={clsx(className, highlighted, styles['codeBlock'], 'thin-scrollbar')}
          style={style}
        >
          <code
            className={clsx(styles['codeBlockLines'], numbered && styles['codeBlockLinesWithNumbering'])}
            style={numbered ? { counterReset: `line-count ${lineNumbersStart - 1}` } : undefined}
          >
            {tokens.map((line, index) => (
              <Line
                // The lines of a block never move, so their position is their identity.
                key={index}
                line={line}
                getLineProps={getLineProps}
                getTokenProps={getTokenProps}
                classNames={lineClassNames[index]}
                showLineNumbers={numbered}
              />
            ))}
          </code>
        </pre>
      )}
    </Highlight>
  );
});

export default function CodeBlockContent({ className }: Props): ReactNode {
  const { metadata, wordWrap } = useCodeBlockContext();
  return <Lines className={className} metadata={metadata} codeBlockRef={wordWrap.codeBlockRef} />;
}
