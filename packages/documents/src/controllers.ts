import type { Transaction } from '@quire/db';
import type { Meta } from '@quire/meta';
import type { DocContext, DocData, WriteFlags } from './context';
import type { JobEnqueueing } from './jobs';
import type { VirtualDocType } from './virtual';

/** Frappe's controller hooks, in the order the lifecycle runs them (frappe-wire.md §5). */
export const HOOKS = [
  'before_insert',
  'before_naming',
  'autoname',
  'before_validate',
  'validate',
  'before_save',
  'before_submit',
  'before_cancel',
  'before_update_after_submit',
  'after_insert',
  'on_update',
  'on_submit',
  'on_cancel',
  'on_update_after_submit',
  'on_change',
  'on_trash',
  'after_delete',
] as const;

export type HookName = (typeof HOOKS)[number];

/** `enqueue` and `enqueueDoc` write the job in the hook's transaction: a rolled-back write never runs it. */
export interface HookArgs extends JobEnqueueing {
  /** The document being written; hooks may change it before it is stored (before_* and validate). */
  doc: DocData;
  /** The stored version before this write; undefined on insert. */
  previous: DocData | undefined;
  meta: Meta;
  ctx: DocContext;
  tx: Transaction;
  flags: WriteFlags;
}

export type Hook = (args: HookArgs) => void | Promise<void>;

export type DocController = Partial<Record<HookName, Hook>>;

/**
 * Controllers attached to DocTypes by apps; `*` attaches to every DocType (e.g. the webhook outbox).
 * Built once when the apps are loaded and never changed afterwards, so every process that loads the
 * same apps (API, CLI, workers) runs the same hooks.
 */
export class ControllerRegistry {
  private readonly byDoctype = new Map<string, DocController[]>();
  private readonly virtuals: ReadonlyMap<string, VirtualDocType>;

  /** `virtuals`: the record sources of virtual DocTypes, by DocType. */
  constructor(entries: Iterable<readonly [doctype: string, controller: DocController]>, virtuals: ReadonlyMap<string, VirtualDocType> = new Map()) {
    this.virtuals = virtuals;
    for (const [doctype, controller] of entries) {
      let list = this.byDoctype.get(doctype);
      if (!list) this.byDoctype.set(doctype, (list = []));
      list.push(controller);
    }
  }

  hooks(doctype: string, hook: HookName): Hook[] {
    const out: Hook[] = [];
    for (const c of this.byDoctype.get(doctype) ?? []) {
      const h = c[hook];
      if (h) out.push(h);
    }
    for (const c of this.byDoctype.get('*') ?? []) {
      const h = c[hook];
      if (h) out.push(h);
    }
    return out;
  }

  virtualOf(doctype: string): VirtualDocType | undefined {
    return this.virtuals.get(doctype);
  }

  async run(hook: HookName, args: HookArgs): Promise<void> {
    for (const h of this.hooks(args.meta.name, hook)) await h(args);
  }
}
