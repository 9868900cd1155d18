/** `text` parsed as JSON, or `fallback` when it is not JSON (an HTML page, plain text, nothing). */
export function parseJson(text: string, fallback?: unknown): any {
  try {
    return JSON.parse(text);
  } catch {
    return fallback;
  }
}
