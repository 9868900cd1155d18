/**
 * What a failed call tells the user, read from the FrappeError the SDK throws (the server's JSON
 * envelope plus `httpStatus`): the `_server_messages` (a JSON list of JSON objects with a
 * `message`), else `message`/`exception`.
 */
export interface ApiFailure {
  httpStatus?: number;
  message?: string;
  exception?: string;
  exc_type?: string;
  _server_messages?: string;
}

function asFailure(error: unknown): ApiFailure {
  return typeof error === 'object' && error !== null ? error : { message: String(error) };
}

/** Server messages carry HTML (`<strong>ToDo</strong>`); the desk shows their text. */
function plain(html: string): string {
  return new DOMParser().parseFromString(html, 'text/html').body.textContent.trim();
}

export function messagesOf(error: unknown): string[] {
  const failure = asFailure(error);
  const out: string[] = [];
  if (failure._server_messages) {
    try {
      const list = JSON.parse(failure._server_messages) as unknown[];
      for (const item of list) {
        const parsed: unknown = typeof item === 'string' ? JSON.parse(item) : item;
        const message = typeof parsed === 'object' && parsed !== null ? (parsed as { message?: unknown }).message : parsed;
        if (typeof message === 'string' && message !== '') out.push(plain(message));
      }
    } catch {
      // not Frappe's format: fall back to the message below
    }
  }
  if (out.length === 0) {
    const exception = failure.exception?.replace(/^[\w.]+(Error|Exception): /, '');
    const message = failure.message && failure.message !== 'There was an error.' ? failure.message : undefined;
    out.push(plain(exception || message || failure.exc_type || 'Error'));
  }
  return out;
}

export function excTypeOf(error: unknown): string | undefined {
  const failure = asFailure(error);
  return failure.exc_type ?? failure.exception?.match(/^(?:[\w.]+\.)?(\w+(?:Error|Exception))\b/)?.[1];
}

export function isTimestampMismatch(error: unknown): boolean {
  return excTypeOf(error) === 'TimestampMismatchError';
}
