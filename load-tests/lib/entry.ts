// What every entry script shares: its configuration (read once in the init context, where k6
// allows open()), its options from scenarios.js, setup() and handleSummary().
import { buildOptions, type LoadOptions, type ScriptName } from '../scenarios.js';
import { loadConfig, type LoadConfig } from './config.ts';
import { prepare, prepareFairness, type SetupData } from './setup.ts';
import { summarize, type SummaryData, type SummaryMeta, type SummaryReport } from './summary.ts';

export interface Entry {
  config: LoadConfig;
  options: LoadOptions;
  setup(): Promise<SetupData>;
  /** `report`: the script's own section (the fairness script's figures). */
  handleSummary(data: SummaryData, report?: SummaryReport): Record<string, string>;
}

function summaryMeta(script: ScriptName, config: LoadConfig): SummaryMeta {
  return {
    script,
    profile: config.profile,
    bases: config.bases,
    tenants: config.tenants.length,
    runner: __ENV.QUIRE_LOAD_RUNNER ?? 'k6',
    ...(__ENV.RUN_ABOUT ? { target: __ENV.RUN_ABOUT } : {}),
  };
}

export function entry(script: ScriptName): Entry {
  const config = loadConfig(script, __ENV, (path) => open(path));
  return {
    config,
    options: buildOptions(script, __ENV),
    // The fairness script loads two tenants in set roles; the others spread over every tenant.
    setup: () => (script === 'fairness' ? prepareFairness(config) : prepare(config)),
    handleSummary: (data, report) => summarize(data, config.summaryJson, summaryMeta(script, config), report),
  };
}
