#!/usr/bin/env node
// The quire command. In a checkout it runs the TypeScript sources through tsx's loader. Started as
// `node --conditions=quire-dist bin/quire.mjs` after `npm run build` (the container image's
// entrypoint), every @quire package resolves to its compiled dist/ and tsx is never loaded.
const compiled = import.meta.resolve('@quire/cli').endsWith('.js');
if (!compiled) {
  const { register } = await import('tsx/esm/api');
  register();
}
const { main } = await import('@quire/cli');
process.exitCode = await main(process.argv.slice(2));
