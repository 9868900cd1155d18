import { AuthenticationError, InvalidAuthorizationToken } from '@quire/errors';
import type { Platform } from '@quire/tenancy';
import type { Request } from 'express';
import { Strategy } from 'passport-strategy';
import { locals } from '../http/locals';

/**
 * Frappe's API key authentication (frappe/auth.py::validate_auth_via_api_keys):
 * `Authorization: token <key>:<secret>` or `Authorization: Basic base64(<key>:<secret>)`.
 * A wrong or unknown pair is a 401; an undecodable Basic value a 400, as in Frappe.
 */
abstract class ApiKeyStrategy extends Strategy {
  constructor(private readonly platform: Platform) {
    super();
  }

  /** key and secret from the credentials part of the header, or undefined when malformed. */
  protected abstract credentials(value: string): [string, string] | undefined;

  override authenticate(req: Request): void {
    const value = (req.headers.authorization ?? '').split(' ')[1] ?? '';
    let pair: [string, string] | undefined;
    try {
      pair = this.credentials(value);
    } catch (e) {
      this.error(e as Error);
      return;
    }
    if (!pair) {
      this.error(new AuthenticationError('', { silent: true }));
      return;
    }
    const res = req.res!;
    this.platform.apiKeys.authenticate(locals(res).tenant, pair[0], pair[1]).then(
      (principal) => (principal ? this.success(principal) : this.error(new AuthenticationError('', { silent: true }))),
      (e: unknown) => this.error(e as Error),
    );
  }
}

function split(decoded: string): [string, string] | undefined {
  const colon = decoded.indexOf(':');
  if (colon <= 0) return undefined;
  return [decoded.slice(0, colon), decoded.slice(colon + 1)];
}

export class TokenStrategy extends ApiKeyStrategy {
  name = 'token';
  protected credentials(value: string) {
    return split(value);
  }
}

export class BasicStrategy extends ApiKeyStrategy {
  name = 'basic';
  protected credentials(value: string) {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(value) || Buffer.from(decoded, 'utf8').toString('base64').replace(/=+$/, '') !== value.replace(/=+$/, '')) {
      throw new InvalidAuthorizationToken('Failed to decode token, please provide a valid base64-encoded token.', { title: 'Invalid Token' });
    }
    return split(decoded);
  }
}
