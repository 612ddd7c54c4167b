/**
 * Code block colours: prism-react-renderer's GitHub (light) and Dracula (dark) themes, with the
 * token colours that fall below a 4.5:1 contrast ratio against their background darkened (or,
 * for dark mode, lightened) until they pass. Keys are the colours as each theme writes them.
 *
 * The code blocks themselves get one theme for both modes, `codeTheme`, whose every value is a
 * CSS custom property; `codeColourCss` gives those properties each mode's values. A code block is
 * therefore the same markup in either mode: the served page shows dark code in dark mode before
 * any script runs, and the browser takes the server's code blocks over as they are instead of
 * highlighting and building every one of them a second time.
 */
import { themes, type PrismTheme, type PrismThemeEntry } from 'prism-react-renderer';

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

/** The colour modes, as the `data-theme` attribute of <html> names them, and their themes. */
const MODES = { light: lightCodeTheme, dark: darkCodeTheme };

/** The name under which the code's own text style (the theme's `plain`) is kept beside the token types. */
const PLAIN = 'plain';

/**
 * The style of each token type in a theme. When a theme names a type twice, the later entry
 * wins, as in prism-react-renderer's own lookup.
 */
function typeStyles(theme: PrismTheme): Map<string, PrismThemeEntry> {
  const styles = new Map<string, PrismThemeEntry>([[PLAIN, theme.plain]]);
  for (const { types, style } of theme.styles)
    for (const type of types) styles.set(type, { ...styles.get(type), ...style });
  return styles;
}

const kebab = (property: string): string =>
  property.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);

/** The custom property that holds one style property of one token type, e.g. `--aiem-code-keyword-font-style`. */
const variable = (type: string, property: string): string => `--aiem-code-${type}-${kebab(property)}`;

/** Each token type and the style properties either mode gives it. */
function typeProperties(): Map<string, Set<string>> {
  const properties = new Map<string, Set<string>>();
  for (const theme of Object.values(MODES))
    for (const [type, style] of typeStyles(theme))
      for (const property of Object.keys(style))
        properties.set(type, (properties.get(type) ?? new Set()).add(property));
  return properties;
}

const styleOf = (type: string, properties: Set<string>): PrismThemeEntry =>
  Object.fromEntries([...properties].map((property) => [property, `var(${variable(type, property)})`]));

/**
 * The theme of both modes. A property a mode leaves out of a type stays undefined in that mode,
 * so the token takes what it would inherit, as it does without the entry.
 */
export const codeTheme: PrismTheme = (() => {
  const { [PLAIN]: plain = new Set<string>(), ...types } = Object.fromEntries(typeProperties());
  return {
    plain: styleOf(PLAIN, plain),
    styles: Object.entries(types).map(([type, properties]) => ({
      types: [type],
      style: styleOf(type, properties),
    })),
  };
})();

/** The values of `codeTheme`'s custom properties in each mode, as one style sheet. */
export const codeColourCss = Object.entries(MODES)
  .map(([mode, theme]) => {
    const declarations = [...typeStyles(theme)].flatMap(([type, style]) =>
      Object.entries(style).map(([property, value]) => `${variable(type, property)}:${String(value)}`),
    );
    return `[data-theme='${mode}']{${declarations.join(';')}}`;
  })
  .join('\n');
