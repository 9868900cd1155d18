export { LocalDiskStore } from './local-disk';
export {
  PUBLIC_PREFIX,
  PRIVATE_PREFIX,
  MAX_FILE_NAME,
  contentHash,
  sanitizeFileName,
  isSafeFileName,
  suffixFileName,
  fileUrlOf,
  parseFileUrl,
  fileKey,
  fileKeyOfUrl,
  isRemoteUrl,
} from './names';
export { contentTypeOf, fileTypeOf, isScriptable, ALLOWED_MIMETYPES, DEFAULT_CONTENT_TYPE } from './mime';
export { filesAt, mayReadFile, checkDownload, type StoredFile, type DownloadCheck } from './access';
