/** The one quoting helper: every identifier in our SQL passes through here. */
export function ident(name: string): string {
  if (name.length === 0 || name.includes('\0')) throw new Error(`invalid SQL identifier ${JSON.stringify(name)}`);
  return `"${name.replace(/"/g, '""')}"`;
}

/** A schema-qualified identifier: `"schema"."table"`. */
export function qualified(schema: string, name: string): string {
  return `${ident(schema)}.${ident(name)}`;
}

/** A string literal for the few DDL statements that cannot take bind parameters (defaults, comments). */
export function literal(value: string): string {
  if (value.includes('\0')) throw new Error('invalid SQL literal');
  return `'${value.replace(/'/g, "''")}'`;
}
