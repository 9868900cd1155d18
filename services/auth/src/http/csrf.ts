import { randomBytes, timingSafeEqual } from 'node:crypto';
import { requestCookies, setCookie } from '@quire/http';
import type { Request, Response } from 'express';
import { formOf } from './request';

/**
 * The login and consent forms' CSRF check (double submit): a random value in an HttpOnly,
 * SameSite cookie scoped to the interaction pages, and the same value in a hidden field.
 */
const CSRF_COOKIE = 'oauth_csrf';

export function issueCsrfToken(req: Request, res: Response): string {
  const token = randomBytes(24).toString('hex');
  setCookie(req, res, CSRF_COOKIE, token, { httpOnly: true, path: '/oauth/interaction' });
  return token;
}

export function csrfValid(req: Request): boolean {
  const sent = formOf(req).csrf_token;
  const kept = requestCookies(req)[CSRF_COOKIE];
  if (typeof sent !== 'string' || !kept || sent.length !== kept.length) return false;
  return timingSafeEqual(Buffer.from(sent), Buffer.from(kept));
}
