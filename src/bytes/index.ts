export { ByteReader, ByteWriter, type CopySource, sameBytes } from './byte-writer.ts';
export { JsonBytes } from './json-bytes.ts';
/** JSON's punctuation bytes, for the scanners that read bodies byte by byte */
export * as JsonPunctuation from './json-punctuation.ts';
