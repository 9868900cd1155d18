// Redoc's standalone bundle (its own React inside), emitted as a hashed asset of ours without the
// logo it would load from its CDN (vite.config.ts): the page loads nothing from elsewhere.
import redocScript from 'redoc/bundles/redoc.standalone.js?url';

/**
 * /api/docs: this site's OpenAPI description (/api/openapi.json, as the signed-in caller may use
 * the API) rendered by Redoc.
 */
interface RedocGlobal {
  init(specOrUrl: string, options: Record<string, unknown>, element: HTMLElement | null, callback?: (error?: unknown) => void): void;
}

const script = document.createElement('script');
script.src = redocScript;
script.onload = () => {
  const redoc = (window as unknown as { Redoc: RedocGlobal }).Redoc;
  redoc.init(
    '/api/openapi.json',
    { hideDownloadButton: false, expandResponses: '200', pathInMiddlePanel: true, requiredPropsFirst: true, sortPropsAlphabetically: false },
    document.getElementById('reference'),
  );
};
document.head.appendChild(script);
