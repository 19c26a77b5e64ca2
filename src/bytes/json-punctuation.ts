/**
 * The bytes of JSON's punctuation: for the writer (json-bytes.ts) and the scanners that read bodies byte by byte
 * (http/wire/json-syntax.ts, plain-body.ts). Each is written as its character: read once, at load.
 */

const byteOf = (ch: string): number => ch.charCodeAt(0);

export const QUOTE = byteOf('"');
export const BACKSLASH = byteOf('\\');
export const COMMA = byteOf(',');
export const COLON = byteOf(':');
export const OPEN_BRACE = byteOf('{');
export const CLOSE_BRACE = byteOf('}');
export const OPEN_BRACKET = byteOf('[');
export const CLOSE_BRACKET = byteOf(']');
