/**
 * The not-found page: the theme's words, then a way on — a search of the documentation for what
 * the reader was after, and the main sections. The search form is a plain GET of the search page,
 * so it works in both search modes and without JavaScript.
 */
import type { ReactNode } from 'react';
import clsx from 'clsx';
import Link from '@docusaurus/Link';
import Translate from '@docusaurus/Translate';
import useBaseUrl from '@docusaurus/useBaseUrl';
import Heading from '@theme/Heading';

const SECTIONS = [
  { to: '/get-started/quickstart', label: 'Quickstart' },
  { to: '/get-started/what-is-ai-engine-manager', label: 'Get started' },
  { to: '/user-guide/dai-engine/create-dai-engine/', label: 'User guide' },
  { to: '/py/installation', label: 'Python client' },
  { to: '/administration/install', label: 'Administration' },
  { to: '/api/', label: 'REST API reference' },
];

export default function NotFoundContent({ className }: { className?: string }): ReactNode {
  const searchPage = useBaseUrl('/search');
  return (
    <main className={clsx('container margin-vert--xl', className)}>
      <div className="row">
        <div className="col col--6 col--offset-3">
          <Heading as="h1" className="hero__title">
            <Translate id="theme.NotFound.title" description="The title of the 404 page">
              Page Not Found
            </Translate>
          </Heading>
          <p>
            <Translate id="theme.NotFound.p1" description="The first paragraph of the 404 page">
              We could not find what you were looking for.
            </Translate>
          </p>
          <form action={searchPage} method="get" role="search" className="not-found-search">
            <label htmlFor="not-found-query">Search the documentation</label>
            <input id="not-found-query" name="q" type="search" placeholder="e.g. pause an engine" />
            <button type="submit" className="button button--primary">
              Search
            </button>
          </form>
          <nav aria-label="Main sections">
            <p>Or start from a main section:</p>
            <ul>
              {SECTIONS.map(({ to, label }) => (
                <li key={to}>
                  <Link to={to}>{label}</Link>
                </li>
              ))}
            </ul>
          </nav>
        </div>
      </div>
    </main>
  );
}
