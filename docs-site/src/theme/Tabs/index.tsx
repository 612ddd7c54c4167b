/**
 * Tabs (the theme's, rewritten without its second mounting). The theme builds every tab set a
 * second time once the page has started, a guard against an old hydration bug; on a guide page
 * that was every example program highlighted and built twice. The selected tab comes from the
 * theme's own hooks: the page starts on the default tab, as the server rendered it, and moves
 * to the reader's choice (`?client=`, or the one remembered) right after, so only a choice
 * other than the default costs a second rendering, and only of the tab set.
 *
 * Keys as in the theme: Enter selects the focused tab; the left and right arrows move the focus
 * round the tabs.
 */
import type { KeyboardEvent, MouseEvent, ReactNode } from 'react';
import clsx from 'clsx';
import { ThemeClassNames } from '@docusaurus/theme-common';
import {
  sanitizeTabsChildren,
  TabsProvider,
  useScrollPositionBlocker,
  useTabs,
  useTabsContextValue,
} from '@docusaurus/theme-common/internal';
import type { Props } from '@theme/Tabs';
import styles from './styles.module.css';

/** Where focus goes from tab `index` of `count` on `key`, or undefined when the key does not move it. */
function focusTarget(key: string, index: number, count: number): number | undefined {
  if (key === 'ArrowRight') return (index + 1) % count;
  if (key === 'ArrowLeft') return (index - 1 + count) % count;
  return undefined;
}

/** The class a tab's `attributes` add, when they add one. */
const extraClass = (attributes: { [key: string]: unknown } | undefined): string | undefined =>
  typeof attributes?.['className'] === 'string' ? attributes['className'] : undefined;

function TabList({ className }: { className: string | undefined }): ReactNode {
  const { selectedValue, selectValue, tabValues, block } = useTabs();
  const { blockElementScrollPositionUntilNextRender } = useScrollPositionBlocker();
  const select = (tab: HTMLElement, value: string) => {
    if (value === selectedValue) return;
    // The page would otherwise jump when the new panel is taller or shorter than the old one.
    blockElementScrollPositionUntilNextRender(tab);
    selectValue(value);
  };
  const onKeyDown = (event: KeyboardEvent<HTMLLIElement>, index: number) => {
    if (event.key === 'Enter') select(event.currentTarget, tabValues[index]?.value ?? selectedValue);
    const target = focusTarget(event.key, index, tabValues.length);
    if (target === undefined) return;
    const tab = event.currentTarget.parentElement?.children[target];
    if (tab instanceof HTMLElement) tab.focus();
  };
  return (
    <ul
      role="tablist"
      aria-orientation="horizontal"
      className={clsx('tabs', { 'tabs--block': block }, className)}
    >
      {tabValues.map(({ value, label, attributes }, index) => (
        <li
          role="tab"
          tabIndex={selectedValue === value ? 0 : -1}
          aria-selected={selectedValue === value}
          key={value}
          onKeyDown={(event) => onKeyDown(event, index)}
          onClick={(event: MouseEvent<HTMLLIElement>) => select(event.currentTarget, value)}
          {...attributes}
          className={clsx('tabs__item', styles['tabItem'], extraClass(attributes), {
            'tabs__item--active': selectedValue === value,
          })}
        >
          {label ?? value}
        </li>
      ))}
    </ul>
  );
}

export default function Tabs(props: Props): ReactNode {
  const value = useTabsContextValue(props);
  return (
    <TabsProvider value={value}>
      <div className={clsx(ThemeClassNames.tabs.container, 'tabs-container', styles['tabList'])}>
        <TabList className={props.className} />
        <div className="margin-top--md">{sanitizeTabsChildren(props.children)}</div>
      </div>
    </TabsProvider>
  );
}
