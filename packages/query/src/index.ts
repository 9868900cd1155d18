export type { ListParams, CompileContext, CompiledQuery, CompiledList } from './types';
export { compileList, compileCount, rowsToArrays } from './compile';
