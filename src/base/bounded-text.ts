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
  let total = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    total += chunk.length;
    if (total > maxBytes) {
      await response.body.cancel().catch(() => undefined);
      return undefined;
    }
    parts.push(chunk);
  }
  return new TextDecoder().decode(Buffer.concat(parts));
}
