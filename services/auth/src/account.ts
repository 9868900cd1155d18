import { qualified, type Queryable } from '@quire/db';
import type { Account, AccountClaims } from 'oidc-provider';

interface UserRow {
  name: string;
  enabled: number;
  email: string | null;
  full_name: string | null;
  first_name: string | null;
  last_name: string | null;
  user_image: string | null;
}

/** oidc-provider's findAccount: an enabled user of the tenant, and the claims of the scopes granted. */
export async function findAccount(db: Queryable, schema: string, id: string): Promise<Account | undefined> {
  const { rows } = await db.query<UserRow>(
    `SELECT "name", "enabled", "email", "full_name", "first_name", "last_name", "user_image" FROM ${qualified(schema, 'tabUser')} WHERE "name" = $1`,
    [id],
  );
  const user = rows[0];
  if (!user || !user.enabled || user.name === 'Guest') return undefined;
  return {
    accountId: user.name,
    claims(): AccountClaims {
      return {
        sub: user.name,
        name: user.full_name ?? user.name,
        ...(user.first_name ? { given_name: user.first_name } : {}),
        ...(user.last_name ? { family_name: user.last_name } : {}),
        ...(user.user_image ? { picture: user.user_image } : {}),
        ...(user.email ? { email: user.email, email_verified: true } : {}),
      };
    },
  };
}
