import { Link } from 'react-router';
import { useReadableDoctypes } from '../meta/hooks';
import { listPath } from '../meta/slug';
import type { ReadableDoctype } from '../meta/types';
import { ErrorNotice, Loading } from '../shell/states';
import { useTitle } from '../shell/useTitle';
import { text } from '../text';

function byModule(doctypes: ReadableDoctype[]): Array<[string, ReadableDoctype[]]> {
  const groups = new Map<string, ReadableDoctype[]>();
  for (const d of doctypes) groups.set(d.module, [...(groups.get(d.module) ?? []), d]);
  return [...groups];
}

/** /app: the DocTypes the user may read, grouped by module. */
export function HomePage() {
  useTitle(text.home.title);
  const { doctypes, error, isLoading } = useReadableDoctypes();
  return (
    <>
      <h1>{text.home.heading}</h1>
      {isLoading && <Loading />}
      {error !== undefined && <ErrorNotice error={error} />}
      {doctypes?.length === 0 && <p className="state">{text.home.empty}</p>}
      <div className="modules">
        {byModule(doctypes ?? []).map(([module, list]) => (
          <section key={module} className="card module" aria-labelledby={`module-${module}`}>
            <h2 id={`module-${module}`}>{module}</h2>
            <ul>
              {list.map((d) => (
                <li key={d.name}>
                  <Link to={listPath(d.name)}>{d.name}</Link>
                  {d.is_submittable === 1 && <span className="tag">{text.home.submittable}</span>}
                </li>
              ))}
            </ul>
          </section>
        ))}
      </div>
    </>
  );
}
