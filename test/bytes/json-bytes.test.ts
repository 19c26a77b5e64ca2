import { expect, test } from 'bun:test';
import { libc } from '../../src/base/index.ts';
import { JsonBytes } from '../../src/bytes/index.ts';
import { seeded } from '../support/fixtures.ts';

/** a writer as the replies use it: native copies where libc is there */
const reply = () => new JsonBytes(256 * 1024, libc());
/** the same without them: TypedArray.set */
const plainReply = () => new JsonBytes(256 * 1024, null);

/** The same writes into a JsonBytes with native copies and into one without: their bytes must not differ. */
function writeBoth(write: (out: JsonBytes) => void): [Uint8Array, Uint8Array] {
  const native = reply();
  const plain = plainReply();
  write(native.start());
  write(plain.start());
  return [native.view().slice(), plain.view().slice()];
}

test.if(process.platform === 'linux')('libc is found on Linux (the replies and the index count on it there)', () => {
  const c = libc();
  expect(c).not.toBeNull();
  const a = new Uint8Array([1, 2, 3, 4, 5]);
  const b = new Uint8Array(5);
  c!.memcpy(c!.address(b) + 1, c!.address(a) + 2, 3);
  expect([...b]).toEqual([0, 3, 4, 5, 0]);
});

test('native copies write what TypedArray.set writes, from any offset of any source, across a grown buffer', () => {
  const random = seeded(17);
  const sources = [1, 7, 64, 1000, 70_000].map((n) => Uint8Array.from({ length: n }, () => Math.floor(random() * 256)));
  // a view that does not start at its buffer's start: its address must be where its own bytes are
  const offsetView = new Uint8Array(sources[4]!.buffer, 12_345, 3_000);
  const all = [...sources, offsetView];
  const copies = Array.from({ length: 400 }, (_, k) => {
    const length = all[k % all.length]!.length;
    const from = Math.floor(random() * length);
    return { source: k % all.length, from, n: Math.floor(random() * (length - from + 1)) };
  });
  const [native, plain] = writeBoth((out) => {
    const handles = all.map((b) => out.source(b));
    for (const c of copies) out.copyFrom(handles[c.source]!, c.from, c.n).byte(0x2c);
  });
  expect(native.length).toBeGreaterThan(256 * 1024); // past the first buffer: the address is taken again after it grows
  expect(native).toEqual(plain);
});

test('a copy outside its source, from a source of another reply, or to a position outside the buffer is refused before anything is written', () => {
  const other = plainReply();
  for (const out of [reply(), plainReply()]) {
    const src = out
      .start()
      .ascii('ab')
      .source(new Uint8Array([1, 2, 3]));
    expect(() => out.copyFrom(src, 2, 2)).toThrow(RangeError);
    expect(() => out.copyFrom(src, -1, 1)).toThrow(RangeError);
    expect(() => out.copyFrom(src, 0, -1)).toThrow(RangeError);
    expect(() => out.copyFrom(src, Number.NaN, 1)).toThrow(RangeError);
    expect(() => out.copyFrom(src, 0, Number.NaN)).toThrow(RangeError);
    // a source's address is only good for the reply that took it (another's may be 0, or of another buffer)
    expect(() => out.copyFrom(other.source(new Uint8Array([9])), 0, 1)).toThrow(RangeError);
    expect(() => out.moveTo(-1)).toThrow(RangeError);
    expect(() => out.moveTo(10 ** 9)).toThrow(RangeError);
    expect(() => out.moveTo(Number.NaN)).toThrow(RangeError);
    expect([...out.copyFrom(src, 1, 2).view()]).toEqual([0x61, 0x62, 2, 3]);
  }
});

test('an empty source copies nothing; a small array made in JS is copied from where its bytes stay', () => {
  for (const out of [reply(), plainReply()]) {
    const empty = out.start().source(new Uint8Array(0));
    expect(out.copyFrom(empty, 0, 0).view().length).toBe(0);
    expect(() => out.copyFrom(empty, 0, 1)).toThrow(RangeError);
    // a small typed array's bytes may move once something asks for its buffer: taking the address asks first
    const small = new Uint8Array([1, 2, 3, 4]);
    const src = out.source(small);
    void small.subarray(1); // what would have moved them
    small[0] = 7; // written where the bytes are now: a stale address would still read the 1
    expect([...out.copyFrom(src, 0, 4).view()]).toEqual([7, 2, 3, 4]);
  }
});
