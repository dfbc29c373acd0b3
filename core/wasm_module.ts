/**
 * What the sources of dvergr's small WebAssembly modules (core/sha512_block_source.ts,
 * core/sha256_block_source.ts) are assembled with: the opcodes they use, LEB128 numbers, and
 * a module of one function `compress(n: i32)` over one exported memory with its constants
 * in a data segment (WebAssembly core specification §5). Used by those sources and their
 * tests only. Pure.
 */

/** Opcodes (§5.4). */
export const OP = {
  block: 0x02,
  loop: 0x03,
  end: 0x0b,
  br: 0x0c,
  brIf: 0x0d,
  get: 0x20,
  set: 0x21,
  tee: 0x22,
  i32Load: 0x28,
  i64Load: 0x29,
  i32Store: 0x36,
  i64Store: 0x37,
  i32Const: 0x41,
  i64Const: 0x42,
  i32Eqz: 0x45,
  i32LtU: 0x49,
  i32Add: 0x6a,
  i32Sub: 0x6b,
  i32And: 0x71,
  i32Or: 0x72,
  i32Xor: 0x73,
  i32Shl: 0x74,
  i32ShrU: 0x76,
  i32Rotl: 0x77,
  i32Rotr: 0x78,
  i64Add: 0x7c,
  i64And: 0x83,
  i64Or: 0x84,
  i64Xor: 0x85,
  i64Shl: 0x86,
  i64ShrU: 0x88,
  i64Rotr: 0x8a,
} as const;

/** Value types (§5.3.1). */
export const I32 = 0x7f;
export const I64 = 0x7e;
/** The empty block type. */
export const VOID = 0x40;

/** Signed LEB128 of `v`. */
export function sleb(v: bigint): number[] {
  const out: number[] = [];
  for (;;) {
    const byte = Number(v & 0x7fn);
    v >>= 7n;
    const done = (v === 0n && (byte & 0x40) === 0) || (v === -1n && (byte & 0x40) !== 0);
    out.push(done ? byte : byte | 0x80);
    if (done) return out;
  }
}

/** Unsigned LEB128 of `v`. */
export function uleb(v: number): number[] {
  const out: number[] = [];
  do {
    const byte = v & 0x7f;
    v >>>= 7;
    out.push(v === 0 ? byte : byte | 0x80);
  } while (v !== 0);
  return out;
}

export const get = (i: number) => [OP.get, i];
/** i32.const of `v` (a number over 2^31 as its signed 32-bit value). */
export const i32 = (v: number) => [OP.i32Const, ...sleb(BigInt(v | 0))];
export const i64 = (v: bigint) => [OP.i64Const, ...sleb(BigInt.asIntN(64, v))];

function section(id: number, contents: number[]): number[] {
  return [id, ...uleb(contents.length), ...contents];
}

const name = (s: string) => [...uleb(s.length), ...Array.from(s, (c) => c.charCodeAt(0))];

/**
 * A module exporting `memory` (one page) and `compress(n: i32)`, whose local declarations
 * are `locals` (count, type) and instructions `code`, with `data` at address 0.
 */
export function compressModule(
  locals: [number, number][],
  code: number[],
  data: number[],
): Uint8Array<ArrayBuffer> {
  const body = [...uleb(locals.length), ...locals.flatMap(([n, t]) => [...uleb(n), t]), ...code];
  return new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, [1, 0x60, 1, I32, 0]), // type 0: (i32) -> ()
    ...section(3, [1, 0]), // function 0 of type 0
    ...section(5, [1, 0x00, 1]), // one memory of one page
    ...section(7, [2, ...name("memory"), 0x02, 0, ...name("compress"), 0x00, 0]),
    ...section(10, [1, ...uleb(body.length), ...body]),
    ...section(11, [1, 0x00, ...i32(0), OP.end, ...uleb(data.length), ...data]),
  ]);
}
