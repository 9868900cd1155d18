export type {
  DocContext,
  DocData,
  WriteFlags,
  ChangeNotifier,
  FileStore,
  WriteQuota,
  JobEnqueuer,
  JobQueueName,
  JobTarget,
  EnqueueOptions,
  Enqueued,
} from './context';
export { newChildRow } from './values';
export { ControllerRegistry, HOOKS, type DocController, type Hook, type HookArgs, type HookName } from './controllers';
export { getDoc, docExists, insertDoc, updateDoc, deleteDoc, canRead } from './lifecycle';
export { getList, getCount } from './list';
export { serializeDoc, type SerializeOptions } from './serialize';
export { metaDict } from './meta-dict';
export { publishRealtime } from './realtime';
export { hashName, uuid7, nextSeriesValue, parseNamingSeries, parseFormat, validateName } from './naming';
export { storedName, setValues } from './storage';
export { generateKeys, recordLogin, type ApiCredentials } from './user-credentials';
export { getPassword } from './passwords';
export { renameDoc, type RenameOptions } from './rename';
export { documentsMigrations } from './schema';
export { jobEnqueueing, HeldJobs, type JobEnqueueing } from './jobs';
export { isVirtualDocType, type VirtualDocType } from './virtual';
export { VERSION_DOCTYPE, type FieldChange, type VersionDiff } from './versions';
