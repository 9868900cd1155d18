import { KubeError } from './errors';
import { isObject, type KubeObject } from './types';

/** One requirement of a label selector: `k=v`, `k==v`, `k!=v`, `k`, `!k`, `k in (a,b)`, `k notin (a,b)`. */
interface Requirement {
  key: string;
  op: 'in' | 'notin' | 'exists' | '!exists';
  values: string[];
}

export type LabelSelector = readonly Requirement[];

function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '(') depth++;
    else if (ch === ')') depth--;
    else if (ch === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}

export function parseLabelSelector(text: string | null): LabelSelector {
  if (text === null || text.trim() === '') return [];
  return splitTopLevel(text).map((part): Requirement => {
    const set = /^([^\s!=]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(part);
    if (set) {
      const [, key = '', op = 'in', values = ''] = set;
      return { key, op: op === 'in' ? 'in' : 'notin', values: values.split(',').map((v) => v.trim()) };
    }
    const neq = /^([^!=\s]+)\s*!=\s*(.*)$/.exec(part);
    if (neq) return { key: neq[1] ?? '', op: 'notin', values: [neq[2] ?? ''] };
    const eq = /^([^!=\s]+)\s*==?\s*(.*)$/.exec(part);
    if (eq) return { key: eq[1] ?? '', op: 'in', values: [eq[2] ?? ''] };
    if (/^![^!=\s]+$/.test(part)) return { key: part.slice(1), op: '!exists', values: [] };
    if (/^[^!=\s(),]+$/.test(part)) return { key: part, op: 'exists', values: [] };
    throw new KubeError(400, `unable to parse requirement: ${part}`, 'BadRequest');
  });
}

export function matchesLabels(obj: KubeObject, selector: LabelSelector): boolean {
  const raw = obj.metadata.labels;
  const labels = isObject(raw) ? raw : {};
  return selector.every((req) => {
    const value = labels[req.key];
    const present = typeof value === 'string';
    switch (req.op) {
      case 'exists':
        return present;
      case '!exists':
        return !present;
      case 'in':
        return present && req.values.includes(value);
      case 'notin':
        return !present || !req.values.includes(value);
    }
  });
}
