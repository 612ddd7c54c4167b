/**
 * A drawn diagram (src/diagrams/gen/, from scripts/diagrams/) in a figure with its caption. The
 * drawing is inline SVG: it takes the colour mode's palette from the stylesheet, and its title
 * and description are what assistive technology reads.
 */
import type { ComponentType, ReactNode, SVGProps } from 'react';

export default function Diagram({
  of: Drawing,
  children,
}: {
  of: ComponentType<SVGProps<SVGSVGElement>>;
  /** The caption: how to read the drawing. */
  children?: ReactNode;
}): ReactNode {
  return (
    <figure className="diagram-figure">
      <Drawing role="img" focusable="false" />
      {children === undefined ? null : <figcaption>{children}</figcaption>}
    </figure>
  );
}
