/**
 * The navbar search box, wrapped to show an error when the hosted search cannot be reached.
 *
 * Warning: DocSearch has an error screen, but it never appears on a network failure: its
 * autocomplete engine resets the status to "idle" after the failed request, so readers would
 * be told "No results for …", as if the documentation lacked the answer. This wrapper watches
 * the search requests itself and, while the last one failed, shows the error screen in the
 * open search dialog instead.
 *
 * Without hosted search (the offline index), it gives the offline box what readers know from the
 * hosted one: "/" focuses it, and an empty result says "No results for" with the query.
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

/** Whether a key press goes to something the reader types into. */
function typing(target: EventTarget | null): boolean {
  return (
    target instanceof HTMLElement &&
    (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName))
  );
}

/**
 * The hosted dialog's shortcuts: "/" outside text fields, and Ctrl+K and Cmd+K anywhere (the
 * offline box knows only the platform's own one of the two).
 */
function shortcut(event: KeyboardEvent): boolean {
  if (event.altKey || event.shiftKey) return false;
  if (event.key === '/') return !event.ctrlKey && !event.metaKey && !typing(event.target);
  return event.key.toLowerCase() === 'k' && (event.ctrlKey || event.metaKey);
}

/** The offline box's input. */
const offlineInput = (): HTMLInputElement | null =>
  document.querySelector<HTMLInputElement>('.navbar__search-input');

/**
 * "/", Ctrl+K and Cmd+K focus the offline search box (as they open the hosted dialog), and its empty result names
 * the query: the box's own empty template cannot, so its text is completed where it appears.
 */
function useOfflineSearchExtras(enabled: boolean): void {
  useEffect(() => {
    if (!enabled) return undefined;
    const onKey = (event: KeyboardEvent): void => {
      if (!shortcut(event)) return;
      const input = offlineInput();
      if (input === null) return;
      event.preventDefault();
      input.focus();
    };
    const noResults = translate({ id: 'theme.SearchBar.noResultsText', message: 'No results for' });
    const observer = new MutationObserver(() => {
      const query = offlineInput()?.value ?? '';
      const container = document.querySelector('.navbar__search [role="listbox"] [class*="noResults_"]');
      const text = container?.lastElementChild;
      const wanted = `${noResults} "${query}"`;
      if (text && text.textContent !== wanted) text.textContent = wanted;
    });
    const box = document.querySelector('.navbar__search');
    if (box) observer.observe(box, { childList: true, subtree: true });
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('keydown', onKey);
      observer.disconnect();
    };
  }, [enabled]);
}

export default function SearchBarWithErrors(props: object): ReactNode {
  const { siteConfig } = useDocusaurusContext();
  const hosted = Boolean(siteConfig.themeConfig['algolia']);
  const { failed, transformSearchClient } = useSearchFailure();
  useOfflineSearchExtras(!hosted);
  if (!hosted) return <SearchBar {...props} />;
  return (
    <>
      <SearchBar {...props} transformSearchClient={transformSearchClient} />
      {/* A dialog closed since the failure is gone; a new one starts without the error. */}
      {failed?.isConnected && createPortal(<ErrorScreen />, failed)}
    </>
  );
}
