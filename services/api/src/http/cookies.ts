import type { CookieOptions } from '@quire/apps';
import { parse, serialize } from 'cookie';
import type { Request, Response } from 'express';

export function requestCookies(req: Request): Record<string, string | undefined> {
  const header = req.headers.cookie;
  return header ? parse(header) : {};
}

/** Frappe's cookies: path `/`, SameSite=Lax, Secure on https, values URL-quoted. */
export function setCookie(req: Request, res: Response, name: string, value: string, options: CookieOptions = {}): void {
  const cookie = serialize(name, value, {
    path: '/',
    sameSite: (options.sameSite ?? 'Lax').toLowerCase() as 'lax' | 'strict' | 'none',
    httpOnly: options.httpOnly ?? false,
    secure: req.secure,
    ...(options.maxAge !== undefined ? { maxAge: options.maxAge, expires: new Date(Date.now() + options.maxAge * 1000) } : {}),
  });
  res.append('Set-Cookie', cookie);
}

export function clearCookie(req: Request, res: Response, name: string): void {
  res.append('Set-Cookie', serialize(name, '', { path: '/', sameSite: 'lax', secure: req.secure, expires: new Date(0) }));
}

/** The cookies Frappe clears when a session ends or a request's session has expired. */
export const SESSION_COOKIES = ['full_name', 'user_id', 'sid', 'user_image', 'user_lang', 'system_user'] as const;
