/**
 * The home page: what AI Engine Manager is, who it is for, and where to start reading.
 */
import type { ReactNode } from 'react';
import Link from '@docusaurus/Link';
import useDocusaurusContext from '@docusaurus/useDocusaurusContext';
import Heading from '@theme/Heading';
import Layout from '@theme/Layout';
import Diagram from '../components/Diagram';
import Architecture from '../diagrams/gen/architecture.svg';
import styles from './index.module.css';

interface Feature {
  title: string;
  body: ReactNode;
  /** The guide the title leads to, if any. */
  to?: string;
}

const engines: Feature[] = [
  {
    title: 'Driverless AI engines',
    to: '/user-guide/dai-engine/create-dai-engine/',
    body: (
      <>
        Start a Driverless AI server for automatic machine learning in one call. Pick a profile and a version;
        CPU, GPU, memory and storage default to what the profile allows, and the engine pauses by itself when
        it has been idle too long.
      </>
    ),
  },
  {
    title: 'H2O engines',
    to: '/user-guide/h2o-engine/create-h2o-engine/',
    body: (
      <>
        Run multi-node H2O-3 clusters for distributed machine learning. Ask for a size recommendation from the
        data you plan to load, and terminate the cluster when you are done.
      </>
    ),
  },
  {
    title: 'Notebook engines',
    to: '/user-guide/notebook-engine/create-notebook-engine/',
    body: (
      <>
        Open a Jupyter notebook server from an image your administrator provides, with an optional Git
        repository cloned into it, and reach it through the engine&apos;s own URL.
      </>
    ),
  },
];

const platform: Feature[] = [
  {
    title: 'Administrators stay in control',
    body: (
      <>
        Profiles set the limits of every engine (CPU, GPU, memory, storage, idle and running time, how many
        engines each user may run) and which roles may use them. Versions and images decide what engines run.
      </>
    ),
  },
  {
    title: 'Kubernetes native',
    to: '/user-guide/kubectl-and-gitops',
    body: (
      <>
        Every engine, profile and version is a Kubernetes custom resource: etcd is the only database, and an
        operator turns engines into pods, StatefulSets, volumes and services. Install it with Helm, and
        declare engines with <code>kubectl apply</code> or GitOps, checked like API calls.
      </>
    ),
  },
  {
    title: 'One API, three ways in',
    body: (
      <>
        The same API answers gRPC and REST under <code>/v1</code>; the published Python client{' '}
        <code>h2o-engine-manager</code> works with it unchanged.
      </>
    ),
  },
];

function FeatureList({ features }: { features: Feature[] }): ReactNode {
  return (
    <div className="row">
      {features.map((feature) => (
        <div key={feature.title} className={`col col--4 ${styles.feature}`}>
          <Heading as="h3">
            {feature.to ? <Link to={feature.to}>{feature.title}</Link> : feature.title}
          </Heading>
          <p>{feature.body}</p>
        </div>
      ))}
    </div>
  );
}

export default function Home(): ReactNode {
  const { siteConfig } = useDocusaurusContext();
  const productVersion = String(siteConfig.customFields?.['productVersion'] ?? '');
  return (
    <Layout
      title="Managed AI engines on Kubernetes"
      description="AI Engine Manager documentation: create and run Driverless AI, H2O and notebook engines on Kubernetes."
    >
      <header className={styles.hero}>
        <div className="container">
          <Heading as="h1" className={styles.title}>
            {siteConfig.title}
          </Heading>
          <p className={styles.tagline}>{siteConfig.tagline}</p>
          <p className={styles.version}>Documentation for version {productVersion}</p>
          <div className={styles.actions}>
            <Link className="button button--primary button--lg" to="/get-started/quickstart">
              Quickstart
            </Link>
            <Link className="button button--secondary button--lg" to="/get-started/what-is-ai-engine-manager">
              Get started
            </Link>
            <Link className="button button--secondary button--lg" to="/api/">
              REST API reference
            </Link>
          </div>
        </div>
      </header>
      <main className="container">
        <section className={styles.section}>
          <Heading as="h2">Engines for data science, on demand</Heading>
          <p>
            AI Engine Manager lets data scientists create and run managed AI compute engines inside their
            workspaces, from the profiles, versions and images that platform administrators define. Engines
            start, pause, resume and resize through one API; the manager keeps each within its limits.
          </p>
          <FeatureList features={engines} />
        </section>
        <section className={styles.section}>
          <Heading as="h2">How it works</Heading>
          <div className={`row ${styles.howItWorks}`}>
            <div className="col col--7">
              <Diagram of={Architecture} />
            </div>
            <div className="col col--5">
              <p>
                You call the <strong>gateway</strong> with the Python client, curl or any gRPC client. It
                checks your token and what the policy lets you do, validates the request against the profile,
                and stores the engine in the <strong>Kubernetes API</strong>: there is no other database.
              </p>
              <p>
                The <strong>operator</strong> watches engines and turns each into pods, volumes and services,
                reports its state, and pauses it when it has been idle too long.
              </p>
              <p>
                <Link to="/get-started/what-is-ai-engine-manager#how-it-works">
                  How AI Engine Manager works
                </Link>
              </p>
            </div>
          </div>
        </section>
        <section className={styles.section}>
          <Heading as="h2">Built for the platform team</Heading>
          <FeatureList features={platform} />
        </section>
      </main>
    </Layout>
  );
}
