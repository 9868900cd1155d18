import { AuthenticationError, InvalidAuthorizationToken } from '@quire/errors';
import { localsOf, parseBasicCredentials } from '@quire/http';
import type { Platform } from '@quire/tenancy';
import type { Request } from 'express';
import { Strategy } from 'passport-strategy';

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
    this.platform.apiKeys.authenticate(localsOf(req).tenant, pair[0], pair[1]).then(
      (principal) => (principal ? this.success(principal) : this.error(new AuthenticationError('', { silent: true }))),
      (e: unknown) => this.error(e as Error),
    );
  }
}

export class TokenStrategy extends ApiKeyStrategy {
  name = 'token';
  protected credentials(value: string): [string, string] | undefined {
    const colon = value.indexOf(':');
    return colon <= 0 ? undefined : [value.slice(0, colon), value.slice(colon + 1)];
  }
}

export class BasicStrategy extends ApiKeyStrategy {
  name = 'basic';
  protected credentials(value: string): [string, string] | undefined {
    const basic = parseBasicCredentials(value);
    if (basic === 'malformed') {
      throw new InvalidAuthorizationToken('Failed to decode token, please provide a valid base64-encoded token.', { title: 'Invalid Token' });
    }
    return basic && [basic.user, basic.password];
  }
}
