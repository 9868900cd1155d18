// k6 run -e BASE=https://{tenant}.quire.example.com -e TENANTS_FILE=tenants.jsonl load-tests/fairness.ts
// Tenant fairness: the second tenant's lists of 20 alone, then while the first floods with heavy
// lists; the summary ends with the quiet tenant's p99 under the flood against alone (load-tests/README.md).
import { FAIRNESS } from './scenarios.js';
import { fairnessReport, type SummaryData } from './lib/summary.ts';
import { entry } from './lib/entry.ts';
import * as iterations from './lib/iterations.ts';
import type { SetupData } from './lib/setup.ts';

const run = entry('fairness');

export const options = run.options;

export function setup(): Promise<SetupData> {
  return run.setup();
}

export function quietList(data: SetupData): Promise<void> {
  return iterations.quietList(data);
}

export function floodList(data: SetupData): Promise<void> {
  return iterations.floodList(data);
}

export function handleSummary(data: SummaryData): Record<string, string> {
  const [flood, quiet] = run.config.tenants;
  const report = fairnessReport(data, { flood: flood?.name ?? '(none)', quiet: quiet?.name ?? '(none)', targetRatio: FAIRNESS.targetRatio });
  return run.handleSummary(data, report);
}
