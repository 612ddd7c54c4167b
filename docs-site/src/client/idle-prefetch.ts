/**
 * Prefetches the pages that on-screen links lead to one link at a time, when the browser is idle.
 * Every internal link asks for its page's code as it comes into view, so the links on screen when
 * a page starts all ask at once; answering them in that one callback (matching each route and
 * adding a prefetch hint per code chunk) was the longest task of a guide page's start on a
 * phone, delaying the first tap. Hovering a link still loads its page at once.
 */
import type { ClientModule } from '@docusaurus/types';

type Prefetcher = Window['docusaurus'];

/** Runs `task` when the browser has nothing else to do (soon after, where it cannot tell). */
const whenIdle = (task: () => void): void => {
  if (typeof window.requestIdleCallback === 'function') window.requestIdleCallback(task);
  else window.setTimeout(task, 0);
};

/** The site's prefetcher, with its prefetches queued and run one per idle period. */
function oneAtATime(prefetcher: Prefetcher): Prefetcher {
  const queue: (() => void)[] = [];
  const next = () => {
    queue.shift()?.();
    if (queue.length > 0) whenIdle(next);
  };
  const prefetch = (url: string) =>
    new Promise<void[]>((resolve) => {
      queue.push(() => {
        const started = prefetcher.prefetch(url);
        resolve(started === false ? [] : started);
      });
      if (queue.length === 1) whenIdle(next);
    });
  return Object.freeze({ ...prefetcher, prefetch });
}

let installed = false;

// The site puts its prefetcher on `window` after loading this module and before rendering; the
// first route update comes with the first render, before any link has come into view.
export const onRouteDidUpdate: ClientModule['onRouteDidUpdate'] = () => {
  if (installed) return;
  window.docusaurus = oneAtATime(window.docusaurus);
  installed = true;
};
