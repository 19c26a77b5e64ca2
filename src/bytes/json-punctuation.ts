/**
 * The bytes of JSON's punctuation: for the writer (json-bytes.ts) and the scanners that read bodies byte by byte
 * (http/wire/json-syntax.ts, plain-body.ts).
 */
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;
