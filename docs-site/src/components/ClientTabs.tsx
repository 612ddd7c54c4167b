/**
 * One task done three ways: with the Python client, with curl against the REST API, and with
 * kubectl. The reader's choice is remembered across pages (and can be linked: ?client=rest).
 * Only the chosen tab is rendered (lazy): the others' code is highlighted when it is opened,
 * not while the page starts, which is most of what a guide page costs a phone.
 */
import type { ReactNode } from 'react';
import CodeBlock from '@theme/CodeBlock';
import Link from '@docusaurus/Link';
import TabItem from '@theme/TabItem';
import Tabs from '@theme/Tabs';

/** A documented example file (docs-site/examples/) and the output its test run prints. */
export interface Example {
  file: string;
  source: string;
  output?: string;
}

const isExample = (value: Example | ReactNode): value is Example =>
  typeof value === 'object' && value !== null && 'source' in value;

function ExampleBlock({ example, language }: { example: Example; language: string }): ReactNode {
  return (
    <>
      <CodeBlock language={language} title={example.file}>
        {example.source}
      </CodeBlock>
      {example.output === undefined ? null : (
        <CodeBlock language={language === 'python' ? 'text' : 'json'} title="Output">
          {example.output}
        </CodeBlock>
      )}
    </>
  );
}

export default function ClientTabs({
  python,
  rest,
  kubectl,
}: {
  python: Example;
  rest: Example;
  /** A manifest to apply, or the kubectl commands themselves. */
  kubectl: Example | ReactNode;
}): ReactNode {
  return (
    <Tabs groupId="client" queryString="client" lazy>
      <TabItem value="python" label="Python">
        <ExampleBlock example={python} language="python" />
      </TabItem>
      <TabItem value="rest" label="REST (curl)">
        <p>
          <code>AIEM_TOKEN</code> is an access token (
          <Link to="/get-started/access-ai-engines/#from-the-command-line">how to get one</Link>).
        </p>
        <ExampleBlock example={rest} language="bash" />
      </TabItem>
      <TabItem value="kubectl" label="kubectl">
        {isExample(kubectl) ? (
          <>
            <p>
              The engine as a custom resource named <code>&lt;workspace&gt;.&lt;id&gt;</code>, checked like an
              API call (
              <Link to="/user-guide/kubectl-and-gitops">Declare engines with kubectl or GitOps</Link>).
            </p>
            <ExampleBlock example={kubectl} language="yaml" />
            <CodeBlock language="bash">{`kubectl apply -n ai-engine-manager -f ${kubectl.file}`}</CodeBlock>
          </>
        ) : (
          kubectl
        )}
      </TabItem>
    </Tabs>
  );
}
