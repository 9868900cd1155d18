import { OutgoingEmailError } from '@quire/errors';
import { smtpOptions, type SmtpOptions, type SmtpSecurity, type SmtpTlsTrust } from './smtp-options';

/**
 * The platform's default mail server as one URL (SMTP_URL), for tenants without an outgoing
 * Email Account:
 *
 *   smtp://[user[:password]@]host[:port][?starttls=required|opportunistic|never]
 *   smtps://[user[:password]@]host[:port]
 *
 * `smtps` is implicit TLS (port 465 by default). `smtp` is port 587 with `starttls=required` (the
 * connection must be upgraded before anything is sent), else port 25 and STARTTLS when the server
 * offers it (`opportunistic`, the default) or never (`never`). User and password are
 * percent-encoded (`%40` for `@`); without a user no login is attempted.
 */
export function smtpOptionsFromUrl(url: string, trust: SmtpTlsTrust = {}): SmtpOptions {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid('it is not a URL');
  }
  const implicitTls = parsed.protocol === 'smtps:';
  if (!implicitTls && parsed.protocol !== 'smtp:') throw invalid(`the scheme must be smtp or smtps, not ${parsed.protocol.replace(/:$/, '')}`);
  if (!parsed.hostname) throw invalid('it names no host');
  for (const key of parsed.searchParams.keys()) if (key !== 'starttls') throw invalid(`unknown parameter ${key}`);
  const starttls = parsed.searchParams.get('starttls');
  if (implicitTls && starttls !== null) throw invalid('starttls does not apply to smtps (TLS from the first byte)');
  const security = implicitTls ? 'tls' : starttlsSecurity(starttls);
  const user = decodeURIComponent(parsed.username);
  return smtpOptions(
    {
      // WHATWG keeps the brackets of an IPv6 literal; sockets want the bare address.
      host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: parsed.port ? Number(parsed.port) : undefined,
      security,
      auth: user ? { user, pass: decodeURIComponent(parsed.password) } : undefined,
    },
    trust,
  );
}

function starttlsSecurity(value: string | null): SmtpSecurity {
  switch (value) {
    case null:
    case 'opportunistic':
      return 'opportunistic';
    case 'required':
      return 'starttls';
    case 'never':
      return 'none';
    default:
      throw invalid(`starttls must be required, opportunistic or never, not ${value}`);
  }
}

// The URL holds a password: the message never quotes it.
function invalid(why: string): InstanceType<typeof OutgoingEmailError> {
  return new OutgoingEmailError(`Invalid SMTP URL: ${why}`, { title: 'Invalid SMTP URL' });
}
