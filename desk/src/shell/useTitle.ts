import { useEffect } from 'react';
import { text } from '../text';

/** The page's title, as screen readers and tabs show it. */
export function useTitle(title: string | undefined): void {
  useEffect(() => {
    document.title = title ? `${title} · ${text.appName}` : text.appName;
  }, [title]);
}
