export * from './definition';
export * from './fieldtypes';
export * from './datetime';
export * from './coerce';
export * from './meta';
export * from './normalize';
export * from './ddl';
export * from './registry';
