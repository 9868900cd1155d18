import { ident } from '@quire/db';
import type { CompiledQuery } from './types';

/**
 * SQL fragments with deferred placeholder numbering: a fragment is text chunks and bound values;
 * `render` numbers the values in order of appearance, so no clause can get its numbering wrong.
 * Request values only ever enter a fragment through `Sql.param`.
 */

interface Bound {
  readonly value: unknown;
}

type Chunk = string | Bound;

export class Sql {
  private constructor(private readonly chunks: readonly Chunk[]) {}

  /** Trusted SQL text: keywords, quoted identifiers, constants. Never request text. */
  static raw(text: string): Sql {
    return new Sql([text]);
  }

  /** A bind parameter, optionally with an explicit cast (`$n::cast`). */
  static param(value: unknown, cast?: string): Sql {
    return new Sql(cast === undefined ? [{ value }] : [{ value }, `::${cast}`]);
  }

  static join(parts: readonly Sql[], separator: string): Sql {
    const chunks: Chunk[] = [];
    parts.forEach((part, i) => {
      if (i > 0) chunks.push(separator);
      chunks.push(...part.chunks);
    });
    return new Sql(chunks);
  }

  /** Tagged template: interpolations must be fragments (use `Sql.raw` / `id` for trusted text). */
  static template(strings: TemplateStringsArray, parts: readonly Sql[]): Sql {
    const chunks: Chunk[] = [];
    strings.forEach((s, i) => {
      if (s !== '') chunks.push(s);
      const part = parts[i];
      if (part) chunks.push(...part.chunks);
    });
    return new Sql(chunks);
  }

  render(): CompiledQuery {
    const values: unknown[] = [];
    let text = '';
    for (const chunk of this.chunks) {
      if (typeof chunk === 'string') {
        text += chunk;
      } else {
        values.push(chunk.value);
        text += `$${values.length}`;
      }
    }
    return { text, values };
  }
}

export function sql(strings: TemplateStringsArray, ...parts: Sql[]): Sql {
  return Sql.template(strings, parts);
}

/** A quoted identifier as a fragment. */
export function id(name: string): Sql {
  return Sql.raw(ident(name));
}
