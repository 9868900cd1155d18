import type { ColumnInfo, Meta } from '@quire/meta';

/** The column a filter compares: its SQL expression (json columns read as text) and metadata. */
export interface Operand {
  readonly expr: string;
  readonly column: ColumnInfo;
  /** The DocType that owns the column. */
  readonly meta: Meta;
}

export function operandOf(alias: string, column: ColumnInfo, meta: Meta): Operand {
  const bare = `${alias}.${column.sql}`;
  return { expr: column.kind === 'json' ? `${bare}::text` : bare, column, meta };
}
