// k6 run -e BASE=https://{tenant}.quire.example.com -e TENANTS_FILE=tenants.jsonl load-tests/oauth.ts
// client_credentials tokens from the auth service, and Bearer reads with them (load-tests/README.md).
import type { SummaryData } from './lib/summary.ts';
import { entry } from './lib/entry.ts';
import * as iterations from './lib/iterations.ts';
import type { SetupData } from './lib/setup.ts';

const run = entry('oauth');

export const options = run.options;

export function setup(): Promise<SetupData> {
  return run.setup();
}

export function tokens(data: SetupData): Promise<void> {
  return iterations.tokens(data);
}

export function bearerReads(data: SetupData): Promise<void> {
  return iterations.bearerReads(data);
}

export function handleSummary(data: SummaryData): Record<string, string> {
  return run.handleSummary(data);
}
