/**
 * The From address of an email: the account's own when it insists (Frappe's
 * always_use_account_email_id_as_sender), else the row's sender, else the account's address, else
 * the caller's default.
 */
export function senderOf(rowSender: string | null, account: { email: string | undefined; alwaysAsSender: boolean }, fallback: string): string {
  if (account.alwaysAsSender && account.email) return account.email;
  return rowSender?.trim() || account.email || fallback;
}

/**
 * The last resort when neither the row nor the account names a sender (the platform's server, no
 * default sender configured): `noreply@` the tenant's own host, the site its emails' links point
 * to, so the address at least names who sent it. Without a site URL, `noreply@localhost`.
 */
export function noreplyAddress(siteUrl: string | undefined): string {
  let host = 'localhost';
  if (siteUrl) {
    try {
      host = new URL(siteUrl).hostname.replace(/^\[(.*)\]$/, '$1') || host;
    } catch {
      // not a URL: keep localhost
    }
  }
  return `noreply@${host}`;
}
