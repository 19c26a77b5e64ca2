import { type Fault, fault } from '../base/index.ts';

/**
 * The most bytes a gzip file of at most `maxDecompressedBytes` of content can be: a 64th more for incompressible
 * content's block headers, and 1 MiB for member headers and zero padding.
 */
export function mostRawBytes(maxDecompressedBytes: number): number {
  return maxDecompressedBytes + Math.ceil(maxDecompressedBytes / 64) + 1024 * 1024;
}

/**
 * TOO_LARGE for a file larger than that: refused without being read, since reading takes the whole file into
 * memory (a mistaken multi-GB upload, an export not compressed at all). `label` names the file in the message.
 */
export function rawSizeFault(
  label: string,
  size: number,
  maxDecompressedBytes: number,
): Fault<'TOO_LARGE'> | undefined {
  const most = mostRawBytes(maxDecompressedBytes);
  if (size <= most) return undefined;
  return fault(
    'TOO_LARGE',
    `${label}: the file is ${size} bytes, more than a gzip of at most ${maxDecompressedBytes} bytes of content can be (${most}); it is not read`,
  );
}
