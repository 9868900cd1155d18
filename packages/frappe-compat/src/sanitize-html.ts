/**
 * Frappe's sanitize_html (frappe/utils/html_utils.py) for HTML a user writes that other users'
 * browsers render (comments): an allowlist of formatting tags and attributes, links only to
 * http(s), mailto and tel, images also from data:image. The output is rebuilt from the tokens, never
 * copied from the input: text is escaped, tags and attributes outside the lists are dropped, and
 * script-like elements go with their content. So nothing in it can run script, whatever the input.
 */

const ALLOWED_TAGS = new Set([
  'a', 'abbr', 'b', 'blockquote', 'br', 'caption', 'code', 'col', 'colgroup', 'dd', 'del', 'div', 'dl', 'dt', 'em',
  'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr', 'i', 'img', 'ins', 'kbd', 'li', 'mark', 'ol', 'p', 'pre', 'q', 's', 'small',
  'span', 'strike', 'strong', 'sub', 'sup', 'table', 'tbody', 'td', 'tfoot', 'th', 'thead', 'tr', 'u', 'ul',
]); // prettier-ignore

/** Elements without an end tag. */
const VOID_TAGS = new Set(['br', 'col', 'hr', 'img']);

/** Elements dropped with everything inside them. */
const DROPPED_WITH_CONTENT = new Set([
  'script', 'style', 'iframe', 'object', 'embed', 'applet', 'template', 'noscript', 'svg', 'math', 'title', 'head',
  'textarea', 'select', 'xmp', 'noembed', 'noframes', 'frameset', 'frame', 'plaintext',
]); // prettier-ignore

/** Elements whose content the browser does not parse as markup: their end is found by name, not by tokens. */
const RAW_TEXT = new Set(['script', 'style', 'iframe', 'textarea', 'title', 'xmp', 'noembed', 'noframes', 'noscript', 'plaintext']);

const GLOBAL_ATTRIBUTES = new Set(['class', 'title', 'dir', 'lang']);
const TAG_ATTRIBUTES: Readonly<Record<string, ReadonlySet<string>>> = {
  a: new Set(['href']),
  img: new Set(['src', 'alt', 'width', 'height']),
  td: new Set(['colspan', 'rowspan']),
  th: new Set(['colspan', 'rowspan']),
  ol: new Set(['start']),
};
const URL_ATTRIBUTES = new Set(['href', 'src']);

/** Besides http(s), which any URL attribute may use. */
const LINK_ONLY_SCHEMES = new Set(['mailto', 'tel']);
const IMAGE_DATA_RE = /^data:image\/(?:png|gif|jpe?g|webp);/;

const BASIC_ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** Numeric references (with or without `;`, as browsers read them) and the five basic named ones. */
function decodeEntities(value: string): string {
  return value.replace(/&(?:#(\d+);?|#[xX]([0-9a-fA-F]+);?|(amp|lt|gt|quot|apos);)/g, (whole, dec?: string, hex?: string, named?: string) => {
    if (named) return BASIC_ENTITIES[named] ?? whole;
    const code = dec !== undefined ? Number.parseInt(dec, 10) : Number.parseInt(hex ?? '', 16);
    return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '\ufffd';
  });
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Text as it was, with `&` kept only where it starts a character reference, and `<`, `>` escaped. */
function escapeText(text: string): string {
  return text
    .replace(/&(?![a-zA-Z][a-zA-Z0-9]*;|#\d+;|#[xX][0-9a-fA-F]+;)/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
}

// eslint-disable-next-line no-control-regex
const EDGE_CONTROLS_RE = /^[\u0000-\u0020]+|[\u0000-\u0020]+$/g;

/** A URL the browser would follow safely: relative, or of an allowed scheme. */
function safeUrl(tag: string, value: string): boolean {
  // What a URL parser ignores: leading and trailing C0 controls and spaces, tabs and newlines anywhere.
  const bare = value
    .replace(EDGE_CONTROLS_RE, '')
    .replace(/[\t\n\r]/g, '')
    .toLowerCase();
  const scheme = /^([a-z][a-z0-9+.-]*):/.exec(bare)?.[1];
  if (scheme === undefined || scheme === 'http' || scheme === 'https') return true;
  if (tag === 'a') return LINK_ONLY_SCHEMES.has(scheme);
  return tag === 'img' && IMAGE_DATA_RE.test(bare);
}

interface Tag {
  name: string;
  closing: boolean;
  attributes: Array<[string, string]>;
  /** Index just past the tag's `>`. */
  end: number;
}

const NAME_RE = /[a-zA-Z][a-zA-Z0-9-]*/y;

/** The tag starting at `<` at `start`, or undefined when it is not one (a literal `<`) or never closes. */
function readTag(html: string, start: number): Tag | undefined {
  let i = start + 1;
  const closing = html[i] === '/';
  if (closing) i++;
  NAME_RE.lastIndex = i;
  const match = NAME_RE.exec(html);
  if (!match) return undefined;
  const name = match[0].toLowerCase();
  i = NAME_RE.lastIndex;
  const attributes: Array<[string, string]> = [];
  while (i < html.length) {
    const ch = html[i] as string;
    if (ch === '>') return { name, closing, attributes, end: i + 1 };
    if (/[\s/]/.test(ch)) {
      i++;
      continue;
    }
    let j = i;
    while (j < html.length && !/[\s/>=]/.test(html[j] as string)) j++;
    const attr = html.slice(i, Math.max(j, i + 1)).toLowerCase();
    i = Math.max(j, i + 1);
    while (i < html.length && /\s/.test(html[i] as string)) i++;
    let value = '';
    if (html[i] === '=') {
      i++;
      while (i < html.length && /\s/.test(html[i] as string)) i++;
      const quote = html[i];
      if (quote === '"' || quote === "'") {
        const close = html.indexOf(quote, i + 1);
        if (close < 0) return undefined;
        value = html.slice(i + 1, close);
        i = close + 1;
      } else {
        let k = i;
        while (k < html.length && !/[\s>]/.test(html[k] as string)) k++;
        value = html.slice(i, k);
        i = k;
      }
    }
    attributes.push([attr, decodeEntities(value)]);
  }
  return undefined;
}

function renderStart(tag: Tag): string {
  const allowed = TAG_ATTRIBUTES[tag.name];
  let out = `<${tag.name}`;
  const seen = new Set<string>();
  for (const [attr, value] of tag.attributes) {
    if (seen.has(attr) || !(GLOBAL_ATTRIBUTES.has(attr) || allowed?.has(attr))) continue;
    if (URL_ATTRIBUTES.has(attr) && !safeUrl(tag.name, value)) continue;
    seen.add(attr);
    out += ` ${attr}="${escapeAttribute(value)}"`;
  }
  return `${out}>`;
}

/** Index just past the end of a dropped element that starts before `from` (the end of the input when it never ends). */
function skipDropped(html: string, name: string, from: number): number {
  if (RAW_TEXT.has(name)) {
    const close = new RegExp(`</${name}[\\s/>]`, 'gi');
    close.lastIndex = from;
    const found = close.exec(html);
    if (!found) return html.length;
    const gt = html.indexOf('>', found.index);
    return gt < 0 ? html.length : gt + 1;
  }
  let depth = 1;
  let i = from;
  while (i < html.length) {
    const lt = html.indexOf('<', i);
    if (lt < 0) return html.length;
    const tag = readTag(html, lt);
    if (!tag) {
      i = lt + 1;
      continue;
    }
    if (tag.name === name) depth += tag.closing ? -1 : 1;
    i = tag.end;
    if (depth === 0) return i;
  }
  return html.length;
}

/** The end of a `<!-- … -->` comment, `<!…>` declaration or `<?…>` instruction starting at `start`. */
function skipMarkup(html: string, start: number): number {
  if (html.startsWith('<!--', start)) {
    const close = html.indexOf('-->', start + 4);
    return close < 0 ? html.length : close + 3;
  }
  const gt = html.indexOf('>', start);
  return gt < 0 ? html.length : gt + 1;
}

export function sanitizeHtml(html: string): string {
  let out = '';
  let i = 0;
  while (i < html.length) {
    const lt = html.indexOf('<', i);
    if (lt < 0) {
      out += escapeText(html.slice(i));
      break;
    }
    out += escapeText(html.slice(i, lt));
    const next = html[lt + 1];
    if (next === '!' || next === '?') {
      i = skipMarkup(html, lt);
      continue;
    }
    const tag = readTag(html, lt);
    if (!tag) {
      // Not a tag (`a < b`), or one that never closes: the rest is text, never markup.
      out += '&lt;';
      i = lt + 1;
      if (/[a-zA-Z/]/.test(next ?? '')) {
        out += escapeText(html.slice(lt + 1));
        break;
      }
      continue;
    }
    i = tag.end;
    if (DROPPED_WITH_CONTENT.has(tag.name)) {
      if (!tag.closing) i = skipDropped(html, tag.name, i);
      continue;
    }
    if (!ALLOWED_TAGS.has(tag.name)) continue;
    if (tag.closing) {
      if (!VOID_TAGS.has(tag.name)) out += `</${tag.name}>`;
    } else {
      out += renderStart(tag);
    }
  }
  return out;
}
