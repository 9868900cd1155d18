import { Button, Dialog, DialogTrigger, Heading, Popover } from 'react-aria-components';
import { labelOf } from '../meta/fieldtypes';
import type { DocField } from '../meta/types';
import { text } from '../text';

interface Props {
  choices: DocField[];
  shown: DocField[];
  /** The new columns, or undefined for the DocType's defaults. */
  onChange: (columns: string[] | undefined) => void;
}

/** "Columns": which fields the list shows, a checkbox each (kept in the user's list settings). */
export function ColumnsMenu({ choices, shown, onChange }: Props) {
  const names = shown.map((f) => f.fieldname);
  const toggle = (fieldname: string) => onChange(names.includes(fieldname) ? names.filter((n) => n !== fieldname) : [...names, fieldname]);
  return (
    <DialogTrigger>
      <Button className="button">{text.listView.columns}</Button>
      <Popover className="popover columns-popover" placement="bottom end">
        <Dialog className="dialog columns-dialog">
          <Heading slot="title" className="columns-title">
            {text.listView.columnsTitle}
          </Heading>
          <ul className="columns-list">
            {choices.map((f) => (
              <li key={f.fieldname}>
                <label>
                  <input type="checkbox" checked={names.includes(f.fieldname)} onChange={() => toggle(f.fieldname)} /> {labelOf(f)}
                </label>
              </li>
            ))}
          </ul>
          <button type="button" className="button button-quiet" onClick={() => onChange(undefined)}>
            {text.listView.columnsReset}
          </button>
        </Dialog>
      </Popover>
    </DialogTrigger>
  );
}
