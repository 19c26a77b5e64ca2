export { ByteReader, ByteWriter, type CopySource, sameBytes } from './byte-writer.ts';
export { JsonBytes } from './json-bytes.ts';
export {
  BACKSLASH,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COLON,
  COMMA,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
} from './json-punctuation.ts';
