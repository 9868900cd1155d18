export { pythonJsonDumps, pythonNumberRepr } from './json-dumps';
export { pyBool, parseBoolean, sbool, cint } from './truthiness';
export { decodeJsonArg, jsonOrText, isPlainObject } from './json-args';
export { mergeFormFields } from './form-fields';
export { cstr, jsonStringify, pyLen, pySlice } from './text';
export { sanitizeHtml } from './sanitize-html';
