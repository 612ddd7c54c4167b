/**
 * The theme's code block, without its second rendering in the browser. The theme renders every
 * code block again once the page has started, because the server could only colour it for the
 * default mode. Here the colours are CSS custom properties that each mode sets (see
 * src/code-theme.ts), so the served code block is already right: the browser takes it over
 * as it is, and its tokens are highlighted and built once instead of twice.
 */
import { Children, isValidElement, type ReactNode } from 'react';
import type { Props } from '@theme/CodeBlock';
import ElementContent from '@theme/CodeBlock/Content/Element';
import StringContent from '@theme/CodeBlock/Content/String';

/** The children as one string when they are only strings (so the copy button can copy them). */
function asString(children: ReactNode): ReactNode {
  if (Children.toArray(children).some((child) => isValidElement(child))) return children;
  return Array.isArray(children) ? children.join('') : children;
}

export default function CodeBlock({ children, ...props }: Props): ReactNode {
  const content = asString(children);
  return typeof content === 'string' ? (
    <StringContent {...props}>{content}</StringContent>
  ) : (
    <ElementContent {...props}>{content}</ElementContent>
  );
}
