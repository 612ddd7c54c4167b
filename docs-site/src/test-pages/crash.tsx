/**
 * Test page: throws while rendering as long as the test sets `window.__aiemCrash`, so the test
 * sees the crash screen, clears the fault, and checks that "Try again" brings the page back.
 */
import type { ReactNode } from 'react';
import Layout from '@theme/Layout';

declare global {
  interface Window {
    __aiemCrash?: boolean;
  }
}

function Content(): ReactNode {
  if (typeof window !== 'undefined' && window.__aiemCrash === true)
    throw new Error('The crash test page was asked to fail');
  return <p>The page rendered.</p>;
}

export default function CrashPage(): ReactNode {
  return (
    <Layout title="Crash test" noFooter>
      <main className="container margin-vert--lg">
        <h1>Crash test</h1>
        <Content />
      </main>
    </Layout>
  );
}
