// Module resolution hooks (registered by run.ts with module.register): k6's built-in modules
// resolve to the Node runner's shims; any other k6 module, or a remote jslib import, is refused
// by name rather than failing somewhere inside Node's resolver.
const SHIMS = {
  k6: 'k6.ts',
  'k6/http': 'http.ts',
  'k6/metrics': 'metrics.ts',
  'k6/execution': 'execution.ts',
  'k6/encoding': 'encoding.ts',
};

export async function resolve(specifier, context, nextResolve) {
  const shim = SHIMS[specifier];
  // Through the next resolvers (tsx), so the shim is loaded as TypeScript.
  if (shim) return nextResolve(new URL(`./k6/${shim}`, import.meta.url).href, context);
  if (specifier.startsWith('k6/') || specifier.startsWith('https://')) {
    throw new Error(`the Node load runner has no shim for ${specifier} (it has: ${Object.keys(SHIMS).join(', ')})`);
  }
  return nextResolve(specifier, context);
}
