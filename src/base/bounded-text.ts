/**
 * An answer's body as text, or undefined when it is over `maxBytes`: a peer that sends more than any answer of
 * its kind could be is not read to the end (a platform's Entitlement API, Crossref's REST API). A declared length
 * over the bound is refused before reading; an undeclared one is counted as it arrives.
 */
export async function boundedText(response: Response, maxBytes: number): Promise<string | undefined> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    return undefined;
  }
  if (Number.isFinite(declared)) return response.text(); // the client reads no more than the declared length
  if (!response.body) return '';
  const parts: Uint8Array[] = [];
  if (!(await readUpTo(response.body, maxBytes, parts))) return undefined;
  return new TextDecoder().decode(Buffer.concat(parts));
}

/**
 * Reads and drops at most `maxBytes` of an answer whose body is not used (a webhook receiver's: only its status
 * counts), then lets the rest go: the connection is done with, and an endless body is not read.
 */
export async function discardBounded(response: Response, maxBytes: number): Promise<void> {
  if (response.body) await readUpTo(response.body, maxBytes);
}

/** Reads `body` into `parts` (when given) up to `maxBytes`; false, the stream cancelled, when it is longer. */
async function readUpTo(body: ReadableStream<Uint8Array>, maxBytes: number, parts?: Uint8Array[]): Promise<boolean> {
  let total = 0;
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    total += chunk.length;
    if (total > maxBytes) {
      await body.cancel().catch(() => undefined);
      return false;
    }
    parts?.push(chunk);
  }
  return true;
}
