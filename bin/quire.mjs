#!/usr/bin/env node
// The quire command. Quire runs its TypeScript sources directly through tsx's loader.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../cli/src/main.ts');
process.exitCode = await main(process.argv.slice(2));
