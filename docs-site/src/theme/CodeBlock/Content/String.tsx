/**
 * The theme's code block for a string of code, with its parsed metadata kept between renders.
 * The block renders again once the page has started (the word-wrap button appears when the code
 * is wider than the block); the theme parsed the code's lines again each time, and the new
 * metadata made every line render again too (see ./index.tsx).
 */
import { useMemo, type ReactNode } from 'react';
import { useThemeConfig } from '@docusaurus/theme-common';
import {
  CodeBlockContextProvider,
  createCodeBlockMetadata,
  useCodeWordWrap,
} from '@docusaurus/theme-common/internal';
import type { Props } from '@theme/CodeBlock/Content/String';
import CodeBlockLayout from '@theme/CodeBlock/Layout';

export default function CodeBlockString({
  children: code,
  className,
  metastring,
  language,
  title,
  showLineNumbers,
}: Props): ReactNode {
  const { prism } = useThemeConfig();
  const { magicComments, defaultLanguage } = prism;
  const metadata = useMemo(
    () =>
      createCodeBlockMetadata({
        code,
        className,
        metastring,
        magicComments,
        defaultLanguage,
        language,
        title,
        showLineNumbers,
      }),
    [code, className, metastring, magicComments, defaultLanguage, language, title, showLineNumbers],
  );
  const wordWrap = useCodeWordWrap();
  return (
    <CodeBlockContextProvider metadata={metadata} wordWrap={wordWrap}>
      <CodeBlockLayout />
    </CodeBlockContextProvider>
  );
}
