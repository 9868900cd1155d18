import { createElement, Fragment, type ReactNode } from 'react';

/**
 * A comment's HTML (Frappe stores a comment's content as its editor's HTML) drawn as React elements
 * from an allow-list, never as innerHTML: only these tags survive, with no attributes but a link's
 * http(s)/mailto href; everything else (script, style, iframe, event handlers, images, styles)
 * becomes its text or nothing.
 */
const ALLOWED = new Set(['p', 'br', 'b', 'strong', 'i', 'em', 'u', 's', 'ul', 'ol', 'li', 'blockquote', 'code', 'pre', 'a', 'span', 'div']);
/** Elements whose content is not text for a reader: dropped with it. */
const DROPPED = new Set(['script', 'style', 'template', 'iframe', 'object', 'embed', 'noscript', 'svg', 'math', 'head', 'title']);
const SAFE_HREF = /^(https?:|mailto:)/i;

function convert(node: Node, key: number): ReactNode {
  if (node.nodeType === Node.TEXT_NODE) return node.textContent;
  if (node.nodeType !== Node.ELEMENT_NODE) return null;
  const element = node as Element;
  const tag = element.tagName.toLowerCase();
  if (DROPPED.has(tag)) return null;
  const children = [...element.childNodes].map(convert);
  if (!ALLOWED.has(tag)) return children.length > 0 ? createElement('span', { key }, ...children) : null;
  if (tag === 'br') return createElement('br', { key });
  if (tag === 'a') {
    const href = element.getAttribute('href')?.trim() ?? '';
    if (!SAFE_HREF.test(href)) return createElement('span', { key }, ...children);
    return createElement('a', { key, href, rel: 'noopener noreferrer nofollow', target: '_blank' }, ...children);
  }
  return createElement(tag, { key }, ...children);
}

export function RichText({ html }: { html: string }): ReactNode {
  // A parsed document without scripting: nothing in it runs, nothing loads.
  const body = new DOMParser().parseFromString(html, 'text/html').body;
  return createElement(Fragment, null, ...[...body.childNodes].map(convert));
}
