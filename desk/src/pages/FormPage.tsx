import { useLocation, useParams } from 'react-router';
import { FormView } from '../form/FormView';
import { useDoctypeOfSlug, useMeta } from '../meta/hooks';
import type { DocValues } from '../meta/types';
import { ErrorNotice, Loading } from '../shell/states';
import { NotFound } from './NotFound';

/** /app/<slug>/new and /app/<slug>/<name>: the form of a new or an existing document. */
export function FormPage() {
  const params = useParams();
  const slug = params.slug ?? '';
  const rest = params['*'] ?? '';
  const location = useLocation();
  const { doctype, error, known } = useDoctypeOfSlug(slug);
  const { meta, error: metaError } = useMeta(doctype?.name);
  if (error !== undefined) return <ErrorNotice error={error} />;
  if (known && !doctype) return <NotFound slug={slug} />;
  if (metaError !== undefined) return <ErrorNotice error={metaError} />;
  if (!meta) return <Loading />;
  const isNew = rest === 'new';
  const state = location.state as { amend?: DocValues; notice?: string } | null;
  // A new key per document: the form's state never carries over from one document to another.
  return (
    <FormView
      key={`${meta.name}/${rest}`}
      meta={meta}
      name={isNew ? undefined : rest}
      initial={isNew ? state?.amend : undefined}
      initialNotice={isNew ? undefined : state?.notice}
    />
  );
}
