import { z } from 'zod';

/**
 * Plans: named bundles of limits an operator defines (QUIRE_PLANS, from the chart's `plans` values),
 * as Frappe Cloud sells a site's request time, database size and storage. A tenant's plan is its
 * config key `plan`, else the catalog's default; without plans nothing is limited but what the
 * process settings (TENANT_MAX_CONNECTIONS, DB_STATEMENT_TIMEOUT_MS) already bound.
 */

const UNITS: Readonly<Record<string, number>> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

/** `10GiB`, `500 MB`, `1048576`: a size in bytes. */
export function parseByteSize(text: string | number): number | undefined {
  if (typeof text === 'number') return Number.isSafeInteger(text) && text > 0 ? text : undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]i?b|b)?\s*$/i.exec(text);
  if (!m) return undefined;
  const bytes = Math.round(Number(m[1]) * (UNITS[(m[2] ?? 'b').toLowerCase()] ?? Number.NaN));
  return Number.isSafeInteger(bytes) && bytes > 0 ? bytes : undefined;
}

const byteSize = z.union([z.number(), z.string()]).transform((v, ctx) => {
  const bytes = parseByteSize(v);
  if (bytes === undefined) {
    ctx.addIssue({ code: 'custom', message: `a size like 500MiB, 10GiB or a number of bytes, not ${JSON.stringify(v)}` });
    return z.NEVER;
  }
  return bytes;
});

/** Frappe's site rate limit: `limit` seconds of request time per `window` seconds. */
const rateLimit = z.union([z.string(), z.object({ limit: z.number(), window: z.number() })]).transform((v, ctx) => {
  const m = typeof v === 'string' ? /^\s*(\d+(?:\.\d+)?)\s*\/\s*(\d+)\s*$/.exec(v) : undefined;
  const limit = typeof v === 'string' ? Number(m?.[1]) : v.limit;
  const window = typeof v === 'string' ? Number(m?.[2]) : v.window;
  if (!(limit > 0 && window >= 1 && window <= 86_400 * 31)) {
    ctx.addIssue({ code: 'custom', message: `"<seconds>/<window seconds>" like 600/3600 (a window of 1 s to 31 days), not ${JSON.stringify(v)}` });
    return z.NEVER;
  }
  return { limit, window };
});

const positiveInt = z.number().int().min(1);

export const planSchema = z
  .object({
    /** Seconds of request time per window, counted across processes (429 beyond). */
    rateLimit: rateLimit.optional(),
    /** Requests of the tenant in progress at once in one process (its share of the database pool). */
    maxConnections: positiveInt.optional(),
    /** New documents are refused once the tenant's schema is this big (bytes). */
    databaseSize: byteSize.optional(),
    /** Uploads are refused once the tenant's files would pass this (bytes). */
    fileStorage: byteSize.optional(),
    /** Enabled users besides Administrator and Guest. */
    users: positiveInt.optional(),
    /** The most rows one list request returns. */
    maxPageLength: positiveInt.optional(),
    /** The longest one database statement of the tenant may run. */
    statementTimeoutMs: positiveInt.optional(),
  })
  .strict();

export type Plan = z.output<typeof planSchema>;

export const planCatalogSchema = z
  .object({
    /** The plan of tenants with none set. */
    default: z.string().optional(),
    plans: z.record(z.string().regex(/^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$/, 'a plan name is letters, digits, _ . -'), planSchema).default({}),
  })
  .strict()
  .refine((c) => c.default === undefined || c.default === '' || c.default in c.plans, { message: 'default must name one of plans' });

export type PlanCatalog = z.output<typeof planCatalogSchema>;

/** QUIRE_PLANS: JSON of a PlanCatalog; unset or blank, no plans. */
export const plansSetting = z
  .string()
  .optional()
  .transform((text, ctx): PlanCatalog => {
    if (text === undefined || text.trim() === '') return { plans: {} };
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'QUIRE_PLANS must be JSON: {"default": "<plan>", "plans": {"<plan>": {…}}}' });
      return z.NEVER;
    }
    const parsed = planCatalogSchema.safeParse(json);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', message: `${issue.path.join('.') || '(root)'}: ${issue.message}` });
      return z.NEVER;
    }
    const { default: fallback, plans } = parsed.data;
    return fallback ? { default: fallback, plans } : { plans };
  });
