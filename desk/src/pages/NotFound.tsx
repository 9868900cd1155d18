import { Link } from 'react-router';
import { useTitle } from '../shell/useTitle';
import { text } from '../text';

export function NotFound({ slug }: { slug: string }) {
  useTitle(text.notFound.title);
  return (
    <div className="notice" role="alert">
      <h1>{text.notFound.title}</h1>
      <p>{text.notFound.doctype(slug)}</p>
      <Link to="/app">{text.notFound.back}</Link>
    </div>
  );
}
