/**
 * The navbar search box, wrapped to show an error when the hosted search cannot be reached.
 *
 * Warning: DocSearch has an error screen, but it never appears on a network failure: its
 * autocomplete engine resets the status to "idle" after the failed request, so readers would
 * be told "No results for …", as if the documentation lacked the answer. This wrapper watches
 * the search requests itself and, while the last one failed, shows the error screen in the
 * open search dialog instead. Without hosted search (the offline index), it adds nothing.
 */
import { useCallback, useEffect, useState, type ComponentType, type ReactNode } from 'react';
import { createPortal } from 'react-dom';
import useDocusaurusContext from '@docusaurus/useDocusaurusContext';
import OriginalSearchBar from '@theme-original/SearchBar';
import { translate } from '@docusaurus/Translate';
import type { DocSearchTransformClient } from '@docsearch/react';
import './styles.css';

const SearchBar = OriginalSearchBar as ComponentType<{
  transformSearchClient?: (client: DocSearchTransformClient) => DocSearchTransformClient;
}>;

/** The open dialog's result area while its last search failed; null otherwise. */
type FailedDialog = HTMLElement | null;

function ErrorScreen(): ReactNode {
  return (
    <div className="DocSearch-ErrorScreen search-failure" role="alert">
      <div className="DocSearch-Screen-Icon">
        <svg width="40" height="40" viewBox="0 0 20 20" aria-hidden="true">
          <g stroke="currentColor" fill="none" fillRule="evenodd" strokeLinecap="round">
            <path d="M19 4.8a16 16 0 00-2-1.2m-3.3-1.2A16 16 0 001.1 4.7M16.7 8a12 12 0 00-2.8-1.4M10 6a12 12 0 00-6.7 2M12.3 14.7a4 4 0 00-4.5 0M14.5 11.4A8 8 0 0010 10M3 16L18 2M10 18h0" />
          </g>
        </svg>
      </div>
      {/* The dialog's own wording, under the same translation ids. */}
      <p className="DocSearch-Title">
        {translate({
          id: 'theme.SearchModal.errorScreen.titleText',
          message: 'Unable to fetch results',
        })}
      </p>
      <p className="DocSearch-Help">
        {translate({
          id: 'theme.SearchModal.errorScreen.helpText',
          message: 'You might want to check your network connection.',
        })}
      </p>
    </div>
  );
}

/** Tracks the outcome of the dialog's search requests. */
function useSearchFailure(): {
  failed: FailedDialog;
  transformSearchClient: (client: DocSearchTransformClient) => DocSearchTransformClient;
} {
  const { siteMetadata } = useDocusaurusContext();
  const [failed, setFailed] = useState<FailedDialog>(null);

  const transformSearchClient = useCallback(
    (client: DocSearchTransformClient): DocSearchTransformClient => {
      // What the theme's own transform does: name the site's generator in the request agent.
      client.addAlgoliaAgent('docusaurus', siteMetadata.docusaurusVersion);
      const search = client.search.bind(client);
      const watched: DocSearchTransformClient['search'] = async (...args) => {
        try {
          const response = await search(...args);
          setFailed(null);
          return response;
        } catch (error: unknown) {
          setFailed(document.querySelector<HTMLElement>('.DocSearch-Dropdown'));
          throw error;
        }
      };
      return { ...client, search: watched as DocSearchTransformClient['search'] };
    },
    [siteMetadata.docusaurusVersion],
  );

  // An emptied search box shows recent searches again, without a request: drop the error then.
  useEffect(() => {
    if (!failed) return undefined;
    const onInput = (event: Event): void => {
      const input = event.target;
      if (input instanceof HTMLInputElement && input.value === '') setFailed(null);
    };
    document.addEventListener('input', onInput, true);
    return () => {
      document.removeEventListener('input', onInput, true);
    };
  }, [failed]);

  return { failed, transformSearchClient };
}

export default function SearchBarWithErrors(props: object): ReactNode {
  const { siteConfig } = useDocusaurusContext();
  const { failed, transformSearchClient } = useSearchFailure();
  if (!siteConfig.themeConfig['algolia']) return <SearchBar {...props} />;
  return (
    <>
      <SearchBar {...props} transformSearchClient={transformSearchClient} />
      {/* A dialog closed since the failure is gone; a new one starts without the error. */}
      {failed?.isConnected && createPortal(<ErrorScreen />, failed)}
    </>
  );
}
