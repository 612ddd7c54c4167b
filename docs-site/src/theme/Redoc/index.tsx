/**
 * The API reference (api/), rendered in the browser only, with a server-rendered stand-in.
 *
 * Warning: Redoc renders parts of the page differently on the server and in the browser (its
 * styles and menu state), so React could not take over the server's HTML: it reported a
 * hydration error (#418) on every fresh load and rendered the page again. Rendering it once, in
 * the browser, removes the mismatch; the server's HTML holds the title, a note and the OpenAPI
 * document's link, which is what readers without JavaScript and crawlers can use anyway.
 */
import type { ComponentProps, ReactNode } from 'react';
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

export default function Redoc(props: Props): ReactNode {
  return <BrowserOnly fallback={<Placeholder />}>{() => <OriginalRedoc {...props} />}</BrowserOnly>;
}
