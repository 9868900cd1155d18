// The scripts' own metrics (declared in the init context, as k6 requires). Their names and types
// are the table CUSTOM_METRICS in scenarios.js, which thresholds and the option tests read.
import { Counter, Trend } from 'k6/metrics';
import { CUSTOM_METRICS } from '../scenarios.js';

function declared<K extends keyof typeof CUSTOM_METRICS>(name: K, type: (typeof CUSTOM_METRICS)[K]['type']): K {
  if (CUSTOM_METRICS[name].type !== type) throw new Error(`metric ${name} is a ${CUSTOM_METRICS[name].type}, not a ${type}`);
  return name;
}

/** Responses with a 5xx status, tagged with the request's `name` and `status`. */
export const serverErrors = new Counter(declared('server_errors', 'counter'));
/** Client-credentials tokens fetched by the Bearer reads (first use per VU and tenant, then renewals). */
export const tokenFetches = new Counter(declared('token_fetches', 'counter'));
/** Rows in each list answer. */
export const listRows = new Trend(declared('list_rows', 'trend'));
/** The fairness script's flooding tenant refused with a 429 (the platform protecting the others). */
export const floodRefused = new Counter(declared('flood_refused', 'counter'));
