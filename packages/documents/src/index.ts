export type { DocContext, DocData, WriteFlags, ChangeNotifier, FileStore } from './context';
export { newChildRow } from './values';
export { ControllerRegistry, HOOKS, type DocController, type Hook, type HookArgs, type HookName } from './controllers';
export { getDoc, docExists, insertDoc, updateDoc, deleteDoc, canRead } from './lifecycle';
export { getList, getCount } from './list';
export { serializeDoc, type SerializeOptions } from './serialize';
export { hashName, uuid7, nextSeriesValue, parseNamingSeries, parseFormat, validateName } from './naming';
export { storedName } from './storage';
export { renameDoc, type RenameOptions } from './rename';
