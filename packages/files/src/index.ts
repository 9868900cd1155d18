export { LocalDiskStore } from './local-disk';
