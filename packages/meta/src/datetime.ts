/**
 * Frappe's date and time formats, as Python's str() prints them:
 * `YYYY-MM-DD`, `YYYY-MM-DD HH:MM:SS[.ffffff]`, `HH:MM:SS[.ffffff]`. Stored times are naive UTC.
 */

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

let lastMicros = 0;

/** Microseconds since the epoch, strictly increasing within this process. */
function nowMicros(): number {
  const micros = Math.floor((performance.timeOrigin + performance.now()) * 1000);
  lastMicros = micros > lastMicros ? micros : lastMicros + 1;
  return lastMicros;
}

export function formatDatetime(epochMicros: number): string {
  const ms = Math.floor(epochMicros / 1000);
  const micro = epochMicros % 1_000_000;
  const d = new Date(ms);
  const base = `${formatDate(d)} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  return micro === 0 ? base : `${base}.${pad(micro, 6)}`;
}

export function formatDate(d: Date): string {
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
}

/** The current time in Frappe's datetime format (what `modified` and `creation` hold). */
export function nowDatetime(): string {
  return formatDatetime(nowMicros());
}

export function today(): string {
  return formatDate(new Date());
}

export function nowTime(): string {
  return nowDatetime().slice(11);
}

const DATE_RE = /^(\d{4})-(\d{1,2})-(\d{1,2})$/;
const DATETIME_RE = /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i;
const TIME_RE = /^(\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?$/;

function validDate(y: number, m: number, d: number): boolean {
  if (y < 1 || m < 1 || m > 12 || d < 1) return false;
  const dt = new Date(Date.UTC(y, m - 1, d));
  dt.setUTCFullYear(y);
  return dt.getUTCMonth() === m - 1 && dt.getUTCDate() === d;
}

/** `YYYY-MM-DD` (a datetime's date part is accepted too), or undefined if not a real date. */
export function parseDate(value: string): string | undefined {
  const s = value.trim();
  const m = DATE_RE.exec(s) ?? DATETIME_RE.exec(s);
  if (!m) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (!validDate(y, mo, d)) return undefined;
  return `${pad(y, 4)}-${pad(mo)}-${pad(d)}`;
}

function fraction(f: string | undefined): string {
  if (!f) return '';
  const six = f.padEnd(6, '0').slice(0, 6);
  return /^0+$/.test(six) ? '' : `.${six}`;
}

/** Frappe datetime text (UTC) from the forms clients send, or undefined. An offset is converted to UTC. */
export function parseDatetime(value: string): string | undefined {
  const m = DATETIME_RE.exec(value.trim());
  if (!m) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const [h, mi, se] = [Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0)];
  if (!validDate(y, mo, d) || h > 23 || mi > 59 || se > 59) return undefined;
  const frac = fraction(m[7]);
  const zone = m[8];
  if (!zone || zone.toUpperCase() === 'Z' || /^[+-]00:?00$/.test(zone)) {
    return `${pad(y, 4)}-${pad(mo)}-${pad(d)} ${pad(h)}:${pad(mi)}:${pad(se)}${frac}`;
  }
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  const offsetMin = sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2)));
  const utc = new Date(Date.UTC(y, mo - 1, d, h, mi, se) - offsetMin * 60_000);
  return `${formatDate(utc)} ${pad(utc.getUTCHours())}:${pad(utc.getUTCMinutes())}:${pad(utc.getUTCSeconds())}${frac}`;
}

/** `HH:MM:SS[.ffffff]`, or undefined. */
export function parseTime(value: string): string | undefined {
  const m = TIME_RE.exec(value.trim());
  if (!m) return undefined;
  const [h, mi, se] = [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
  if (h > 23 || mi > 59 || se > 59) return undefined;
  return `${pad(h)}:${pad(mi)}:${pad(se)}${fraction(m[4])}`;
}

/** Adds whole days to a `YYYY-MM-DD` date. */
export function addDays(date: string, days: number): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return formatDate(new Date(Date.UTC(y, m - 1, d + days)));
}

export function addMonths(date: string, months: number): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const target = new Date(Date.UTC(y, m - 1 + months, 1));
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(d, lastDay));
  return formatDate(target);
}
