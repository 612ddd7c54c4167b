/**
 * Code block colours: prism-react-renderer's GitHub (light) and Dracula (dark) themes, with the
 * token colours that fall below a 4.5:1 contrast ratio against their background darkened (or,
 * for dark mode, lightened) until they pass. Keys are the colours as each theme writes them.
 */
import { themes, type PrismTheme } from 'prism-react-renderer';

function recolour(theme: PrismTheme, colours: Record<string, string>): PrismTheme {
  return {
    ...theme,
    styles: theme.styles.map((style) => {
      const colour = style.style.color;
      const replacement = colour === undefined ? undefined : colours[colour.toLowerCase()];
      return replacement ? { ...style, style: { ...style.style, color: replacement } } : style;
    }),
  };
}

export const lightCodeTheme = recolour(themes.github, {
  '#e3116c': '#b30b55',
  '#999988': '#67675a',
  '#36acaa': '#17706e',
  '#00a4db': '#0070a0',
  '#d73a49': '#b31d28',
});

export const darkCodeTheme = recolour(themes.dracula, {
  'rgb(98, 114, 164)': '#a0acd4',
});
