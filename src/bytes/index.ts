export { ByteReader, ByteWriter, type CopySource, sameBytes } from './byte-writer.ts';
export { JsonBytes } from './json-bytes.ts';
