export type { ListParams, ListRequest, FilterSpec, CompileContext, CompileRequestContext, CompiledQuery, CompiledList } from './types';
export { parseListRequest } from './parse-params';
export { FILTER_OPERATORS } from './operators';
export { rowPredicate, type RowPredicate } from './permission';
export { listStatement, countStatement, compileList, compileCount, rowsToArrays } from './compile';
