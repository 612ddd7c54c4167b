/**
 * The navbar and footer links: the product family's documentation and the company's pages.
 * All are external: they open in a new tab, and the link checker does not follow them.
 */
import type { Footer, NavbarItem } from '@docusaurus/theme-common';

/** One navbar dropdown: a group of related products, each linking to its own documentation. */
export interface ProductGroup {
  label: string;
  items: { label: string; href: string }[];
}

const DOCS = 'https://docs.h2o.ai';

/** The five navbar dropdowns, left to right. */
export const productGroups: ProductGroup[] = [
  {
    label: 'Platform',
    items: [
      { label: 'H2O AI Cloud', href: `${DOCS}/haic-documentation/` },
      { label: 'AI App Store', href: `${DOCS}/h2o-ai-cloud/` },
      { label: 'H2O Admin Center', href: `${DOCS}/wave-mc-admin-center/` },
      { label: 'H2O Drive', href: `${DOCS}/h2o-drive/` },
      { label: 'H2O Orchestrator', href: `${DOCS}/h2o-orchestrator/` },
    ],
  },
  {
    label: 'Applications',
    items: [
      { label: 'H2O Notebook Labs', href: `${DOCS}/notebook/` },
      { label: 'H2O Label Genie', href: `${DOCS}/wave-apps/h2o-label-genie/` },
      { label: 'H2O Model Analyzer', href: `${DOCS}/wave-apps/h2o-model-analyzer/` },
      { label: 'H2O Model Validation', href: `${DOCS}/wave-apps/h2o-model-validation/` },
    ],
  },
  {
    label: 'Models',
    items: [
      { label: 'H2O MLOps', href: `${DOCS}/mlops/` },
      { label: 'H2O eScorer', href: `${DOCS}/h2o-escorer/` },
      { label: 'H2O Model Security', href: `${DOCS}/wave-apps/h2o-model-security/` },
    ],
  },
  {
    label: 'AI Engines',
    items: [
      { label: 'AI Engine Manager', href: `${DOCS}/ai-engine-manager/` },
      {
        label: 'H2O Driverless AI',
        href: `${DOCS}/driverless-ai/latest-stable/docs/userguide/index.html`,
      },
      { label: 'H2O-3', href: `${DOCS}/h2o/latest-stable/h2o-docs/index.html` },
      { label: 'H2O Hydrogen Torch', href: `${DOCS}/h2o-hydrogen-torch/` },
      { label: 'H2O Document AI', href: `${DOCS}/h2o-document-ai/` },
    ],
  },
  {
    label: 'GenAI',
    items: [
      { label: 'Enterprise h2oGPTe', href: `${DOCS}/h2ogpte-docs/` },
      { label: 'H2O LLM Studio', href: `${DOCS}/h2o-llmstudio/` },
      { label: 'H2O LLM DataStudio', href: `${DOCS}/h2o-llm-data-studio/` },
      { label: 'H2O Eval Studio', href: `${DOCS}/eval-studio-docs/` },
    ],
  },
];

/** The two call-to-action buttons at the right of the navbar. */
export const navbarButtons = [
  {
    label: 'Learn More',
    // Read out, not shown: "Learn More" alone does not say where the link goes.
    hiddenDetail: ' about the H2O AI Cloud platform',
    href: 'https://h2o.ai/platform/ai-cloud/',
    kind: 'primary',
  },
  { label: 'Request a Demo', hiddenDetail: '', href: 'https://h2o.ai/demo/', kind: 'secondary' },
] as const;

export const navbarItems: NavbarItem[] = [
  ...productGroups.map((group): NavbarItem => ({
    type: 'dropdown',
    label: group.label,
    position: 'left',
    items: group.items.map((item) => ({ label: item.label, href: item.href })),
  })),
  { type: 'search', position: 'right' },
  ...navbarButtons.map((button): NavbarItem => ({
    html: button.hiddenDetail
      ? `${button.label}<span class="visually-hidden">${button.hiddenDetail}</span>`
      : button.label,
    href: button.href,
    position: 'right',
    className: `button button--${button.kind} navbar-button`,
  })),
];

/** The footer's three link groups. */
export const footerLinks: Footer['links'] = [
  {
    title: 'About us',
    items: [
      { label: 'H2O.ai', href: 'https://h2o.ai/' },
      { label: 'Contact us', href: 'https://h2o.ai/company/contact-us/' },
    ],
  },
  {
    title: 'Legal',
    items: [
      { label: 'Privacy policy', href: 'https://h2o.ai/legal/privacy/' },
      { label: 'Compliance & responsible AI', href: 'https://h2o.ai/insights/responsible-ai/' },
    ],
  },
  {
    title: 'Community',
    items: [
      { label: 'X (Twitter)', href: 'https://x.com/h2oai' },
      { label: 'LinkedIn', href: 'https://www.linkedin.com/company/h2oai' },
      { label: 'YouTube', href: 'https://www.youtube.com/c/H2Oai' },
    ],
  },
];
