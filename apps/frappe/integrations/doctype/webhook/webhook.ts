import { whitelist } from '@quire/apps';
import { z } from 'zod';
import type { DocController, DocData } from '@quire/documents';
import { PermissionError, ValidationError } from '@quire/errors';
import { cstr } from '@quire/frappe-compat';
import { STANDARD_FIELDS } from '@quire/meta';
import { checkTemplate, compileCondition, replayEvent, WEBHOOK_EVENTS, MAX_TIMEOUT_SECONDS } from '@quire/webhooks';

/**
 * Webhook (frappe/integrations/doctype/webhook/webhook.py): validates a webhook as Frappe does —
 * events that need a submittable DocType, a condition that parses, a request URL, one request
 * structure, a secret when signing is on — with conditions and templates checked by the safe
 * evaluator and template engine that will run them.
 */

const SUBMIT_EVENTS = new Set(['on_submit', 'on_cancel', 'on_update_after_submit']);
const NOT_WATCHABLE = new Set(['Webhook', 'Webhook Header', 'Webhook Data', 'Webhook Request Log']);

function fail(message: string): never {
  throw new ValidationError(message, { title: 'Invalid Webhook' });
}

export const controller: DocController = {
  // Webhooks are read with the tenant's metadata (cached per load, outbox.ts): a change reloads it everywhere.
  async on_update({ ctx, tx }) {
    await ctx.changes.metaChanged(tx, ctx.tenant);
  },
  async on_trash({ ctx, tx }) {
    await ctx.changes.metaChanged(tx, ctx.tenant);
  },

  validate({ doc, ctx, previous }) {
    const doctype = cstr(doc.webhook_doctype);
    const target = ctx.meta.get(doctype);
    if (!target) fail(`DocType ${doctype} not found`);
    if (NOT_WATCHABLE.has(doctype) || target.istable) fail(`Webhooks cannot watch ${doctype}`);
    const event = cstr(doc.webhook_docevent);
    if (!(WEBHOOK_EVENTS as readonly string[]).includes(event)) fail(`Doc Event must be one of ${WEBHOOK_EVENTS.join(', ')}`);
    if (SUBMIT_EVENTS.has(event) && !target.isSubmittable) fail('DocType must be Submittable for the selected Doc Event');

    if (typeof doc.condition === 'string' && doc.condition.trim()) {
      try {
        compileCondition(doc.condition);
      } catch (e) {
        fail(`Invalid Condition: ${(e as Error).message}`);
      }
    }

    const url = cstr(doc.request_url).trim();
    if (doc.is_dynamic_url) {
      try {
        checkTemplate(url);
      } catch (e) {
        fail(`Invalid Request URL template: ${(e as Error).message}`);
      }
    } else if (!isHttpUrl(url)) {
      fail('Check Request URL');
    }

    const timeout = Number(doc.timeout ?? 5);
    if (!Number.isInteger(timeout) || timeout < 1 || timeout > MAX_TIMEOUT_SECONDS)
      fail(`Request Timeout must be between 1 and ${MAX_TIMEOUT_SECONDS} seconds`);

    if (doc.request_structure === 'Form URL-Encoded') {
      doc.webhook_json = null;
      const rows = (doc.webhook_data as DocData[] | undefined) ?? [];
      const seen = new Set<string>();
      for (const row of rows) {
        const fieldname = cstr(row.fieldname);
        if (seen.has(fieldname)) fail('Same Field is entered more than once');
        seen.add(fieldname);
        if (!target.hasColumn(fieldname) && !(STANDARD_FIELDS as readonly string[]).includes(fieldname)) fail(`${fieldname} is not a field of ${doctype}`);
      }
    } else if (doc.request_structure === 'JSON') {
      doc.webhook_data = [];
      try {
        checkTemplate(cstr(doc.webhook_json));
      } catch (e) {
        fail(`Invalid JSON Request Body template: ${(e as Error).message}`);
      }
    }

    if (doc.enable_security) {
      const secret = doc.webhook_secret;
      const stored = typeof previous?.webhook_secret === 'string' && previous.webhook_secret !== '';
      if ((typeof secret !== 'string' || secret === '') && !stored) fail('Webhook Secret is required when security is enabled');
    }
  },
};

function isHttpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

/**
 * replay_event(event): a System Manager sends an event again — its delivery state is reset and it
 * is due at once (same event id, so receivers can recognise it). Answers whether it was found.
 */
export const replay_event = whitelist(
  async (args, ctx) => {
    if (!ctx.doc.principal.roles.has('System Manager')) throw new PermissionError('Not permitted', { title: 'Not Permitted' });
    const id = typeof args.event === 'string' ? args.event.trim() : '';
    if (!/^[0-9a-f-]{36}$/i.test(id)) throw new ValidationError('event must be an event id (a UUID)', { title: 'Invalid Argument' });
    return replayEvent(ctx.doc.db, ctx.doc.tenant.name, id);
  },
  { methods: ['POST'], args: z.object({ event: z.string() }), returns: z.boolean(), summary: 'Sends a webhook event again (same event id)' },
);
