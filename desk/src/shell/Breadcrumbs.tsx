import { Link, useMatch } from 'react-router';
import { useDoctypeOfSlug } from '../meta/hooks';
import { listPath } from '../meta/slug';
import { text } from '../text';
import './breadcrumbs.css';

interface Props {
  module: string;
  doctype: string;
  /** The open document's title; without it the DocType's list is the current page. */
  document?: string | undefined;
}

/** Where home lists a module's DocTypes (HomePage's `module-<module>` sections). */
const modulePath = (module: string) => `/app#module-${encodeURIComponent(module)}`;

/**
 * Module → DocType → document, as Frappe's desk shows above a list or a form: the module's place on
 * home, the DocType's list, and the current page (aria-current), in a labelled navigation landmark.
 */
export function Breadcrumbs({ module, doctype, document }: Props) {
  return (
    <nav aria-label={text.shell.breadcrumbs} className="breadcrumbs">
      <ol>
        <li>
          <Link to={modulePath(module)}>{module}</Link>
        </li>
        <li>{document === undefined ? <span aria-current="page">{doctype}</span> : <Link to={listPath(doctype)}>{doctype}</Link>}</li>
        {document !== undefined && (
          <li>
            <span aria-current="page">{document}</span>
          </li>
        )}
      </ol>
    </nav>
  );
}

/**
 * The breadcrumbs of a DocType's list (/app/<slug>), mounted by the shell so the list page needs
 * nothing of its own; a form draws its own (it knows the document's title).
 */
export function ListBreadcrumbs() {
  const match = useMatch('/app/:slug');
  const { doctype } = useDoctypeOfSlug(match?.params.slug ?? '');
  if (!match || !doctype) return null;
  return <Breadcrumbs module={doctype.module} doctype={doctype.name} />;
}
