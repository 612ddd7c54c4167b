/**
 * Test page: part of it loads from a separate code chunk ("lazy-panel") through the same
 * loader, and the same Loading component, that every route of the site uses. When the test
 * blocks that chunk, the loader's error box with its Retry button appears.
 */
import type { ReactNode } from 'react';
import Loadable from 'react-loadable';
import Layout from '@theme/Layout';
import Loading from '@theme/Loading';

const Panel = Loadable({
  loader: () => import(/* webpackChunkName: "lazy-panel" */ './lazy-panel'),
  loading: Loading,
});

export default function LazyPage(): ReactNode {
  return (
    <Layout title="Loading test" noFooter>
      <main className="container margin-vert--lg">
        <h1>Loading test</h1>
        <Panel />
      </main>
    </Layout>
  );
}
