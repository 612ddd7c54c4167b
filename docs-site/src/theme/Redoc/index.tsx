/**
 * The API reference (api/), rendered in the browser only, with a server-rendered stand-in.
 *
 * Warning: Redoc renders parts of the page differently on the server and in the browser (its
 * styles and menu state), so React could not take over the server's HTML: it reported a
 * hydration error (#418) on every fresh load and rendered the page again. Rendering it once, in
 * the browser, removes the mismatch; the server's HTML holds the title, a note and the OpenAPI
 * document's link, which is what readers without JavaScript and crawlers can use anyway.
 */
import { useEffect, type ComponentProps, type ReactNode } from 'react';
import BrowserOnly from '@docusaurus/BrowserOnly';
import useBaseUrl from '@docusaurus/useBaseUrl';
import OriginalRedoc from '@theme-original/Redoc';

type Props = ComponentProps<typeof OriginalRedoc>;

function Placeholder(): ReactNode {
  const document = useBaseUrl('/openapi/engine-manager.swagger.json');
  return (
    <div className="api-placeholder">
      <h1>AI Engine Manager API</h1>
      <p>
        The reference of every service and operation is loading. The OpenAPI document it shows can also be{' '}
        <a href={document}>downloaded</a>.
      </p>
    </div>
  );
}

/**
 * Redoc titles an operation's request body and responses with h5 under the operation's h2;
 * screen readers, which navigate by level, are told they are level 3 (the next level down).
 */
function useHeadingLevels(): void {
  useEffect(() => {
    const relevel = () => {
      for (const heading of document.querySelectorAll('.redocusaurus h5:not([aria-level])'))
        heading.setAttribute('aria-level', '3');
    };
    // Redoc fills its own container, which is on the page by now; watching only it spares the
    // rest of the page's changes.
    const observer = new MutationObserver(relevel);
    observer.observe(document.querySelector('.redocusaurus') ?? document.body, {
      childList: true,
      subtree: true,
    });
    relevel();
    return () => observer.disconnect();
  }, []);
}

function Reference(props: Props): ReactNode {
  useHeadingLevels();
  return <OriginalRedoc {...props} />;
}

export default function Redoc(props: Props): ReactNode {
  return <BrowserOnly fallback={<Placeholder />}>{() => <Reference {...props} />}</BrowserOnly>;
}
