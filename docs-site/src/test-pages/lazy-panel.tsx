/** The separately loaded part of the loading test page. */
import type { ReactNode } from 'react';

export default function LazyPanel(): ReactNode {
  return <p>The panel loaded.</p>;
}
