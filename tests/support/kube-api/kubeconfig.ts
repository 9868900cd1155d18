import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';

/**
 * A kubeconfig for the fake server, with no auth. `insecure-skip-tls-verify` is required: client-node
 * refuses an `http:` server without it ("HTTP protocol is not allowed when skipTLSVerify is not set").
 */
export function kubeconfigText(server: { url: string }, namespace = 'default'): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'fake', cluster: { server: server.url, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'fake', user: {} }],
    contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'fake', namespace } }],
    'current-context': 'fake',
  });
}

/** A KubeConfig pointing at the fake server. */
export function kubeconfigFor(server: { url: string }, namespace = 'default'): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfigText(server, namespace));
  return kc;
}

/** Writes the kubeconfig to `dir/kubeconfig` (JSON is valid YAML) for a process started with KUBECONFIG. */
export function writeKubeconfig(server: { url: string }, dir: string, namespace = 'default'): string {
  const file = join(dir, 'kubeconfig');
  writeFileSync(file, kubeconfigText(server, namespace));
  return file;
}
