/**
 * The theme's page layout, with a main landmark (where screen readers jump to the content) for
 * the pages that plugins render without one: the search page and the API reference.
 * Documentation pages and the home page render their own <main>.
 */
import type { ComponentProps, ReactNode } from 'react';
import { useLocation } from '@docusaurus/router';
import useBaseUrl from '@docusaurus/useBaseUrl';
import OriginalLayout from '@theme-original/Layout';

type Props = ComponentProps<typeof OriginalLayout>;

export default function Layout(props: Props): ReactNode {
  // Compared without a final slash: `api.html` is shown as `api`, `api/` as itself.
  const trimmed = (path: string) => path.replace(/\/$/, '');
  const { pathname } = useLocation();
  const withoutMain = [useBaseUrl('/search'), useBaseUrl('/api/')].map(trimmed);
  if (!withoutMain.includes(trimmed(pathname))) return <OriginalLayout {...props} />;
  return (
    <OriginalLayout {...props}>
      <main>{props.children}</main>
    </OriginalLayout>
  );
}
