/**
 * The source of core/sha256_block.ts's WebAssembly module: SHA-256's block function (FIPS
 * 180-4 §6.2.2) assembled from its instructions with core/wasm_module.ts. Not loaded by the
 * program, which holds the bytes (tests/core/sha256_block_test.ts checks they are what this
 * makes). Pure.
 *
 * `compress(n)` hashes the n blocks at BLOCKS into the state at STATE (eight 32-bit words,
 * little-endian), with the message schedule at W and the round constants at K (a data
 * segment).
 */
import { BLOCKS, K, STATE, W } from "./sha256_block.ts";
import { ROUND_CONSTANTS } from "./sha512_block_source.ts";
import { compressModule, get, I32, i32, OP, uleb } from "./wasm_module.ts";

/** Locals: the parameter n, the block's address, the schedule index, a..h, two temporaries. */
const [N, P, T, A, B, C, D, E, F, G, H, X, T1] = Array.from({ length: 13 }, (_, i) => i);

/** i32.load / i32.store at the address on the stack plus `offset` (4-byte aligned). */
const load = (offset: number) => [OP.i32Load, 2, ...uleb(offset)];
const store = (offset: number) => [OP.i32Store, 2, ...uleb(offset)];

/** rotr(x, r1) ^ rotr(x, r2) ^ (x >>> s), or ^ rotr(x, s) when `shift` is false. */
function sigma(x: number, r1: number, r2: number, s: number, shift: boolean): number[] {
  return [
    ...[...get(x), ...i32(r1), OP.i32Rotr, ...get(x), ...i32(r2), OP.i32Rotr, OP.i32Xor],
    ...[...get(x), ...i32(s), shift ? OP.i32ShrU : OP.i32Rotr, OP.i32Xor],
  ];
}

/** `get(T) + step` into T, and on to the loop's start while T < `end`. */
const next = (step: number, end: number) => [
  ...[...get(T), ...i32(step), OP.i32Add, OP.tee, T, ...i32(end), OP.i32LtU, OP.brIf, 0],
];

/** The message schedule of the block at P: W[0..15] from it (big-endian), W[16..63] from those. */
function schedule(): number[] {
  const byteSwapX = [
    ...[...get(X), ...i32(8), OP.i32Rotr, ...i32(0xff00ff00), OP.i32And],
    ...[...get(X), ...i32(8), OP.i32Rotl, ...i32(0x00ff00ff), OP.i32And, OP.i32Or],
  ];
  return [
    ...[...i32(0), OP.set, T, OP.loop, 0x40],
    ...[...get(T), ...get(P), ...get(T), OP.i32Add, ...load(0), OP.set, X],
    ...[...byteSwapX, ...store(W), ...next(4, 64), OP.end],
    OP.loop,
    0x40,
    // W[t] = σ1(W[t-2]) + W[t-7] + σ0(W[t-15]) + W[t-16]; T is 4t.
    ...get(T),
    ...[...get(T), ...load(W - 8), OP.set, X, ...sigma(X, 17, 19, 10, true)],
    ...[...get(T), ...load(W - 28), OP.i32Add],
    ...[...get(T), ...load(W - 60), OP.set, X, ...sigma(X, 7, 18, 3, true), OP.i32Add],
    ...[...get(T), ...load(W - 64), OP.i32Add, ...store(W)],
    ...[...next(4, 256), OP.end],
  ];
}

/** The 64 rounds over a..h. */
function rounds(): number[] {
  // T1 = h + Σ1(e) + Ch(e, f, g) + K[t] + W[t]; T2 = Σ0(a) + Maj(a, b, c).
  const t1 = [
    ...[...get(H), ...sigma(E, 6, 11, 25, false), OP.i32Add],
    ...[...get(G), ...get(E), ...get(F), ...get(G), OP.i32Xor, OP.i32And, OP.i32Xor, OP.i32Add],
    ...[...get(T), ...load(K), OP.i32Add, ...get(T), ...load(W), OP.i32Add, OP.set, T1],
  ];
  const t2 = [
    ...sigma(A, 2, 13, 22, false),
    ...[...get(A), ...get(B), OP.i32And, ...get(C), ...get(A), ...get(B), OP.i32Or, OP.i32And],
    ...[OP.i32Or, OP.i32Add, OP.set, X],
  ];
  const shift = [
    ...[...get(G), OP.set, H, ...get(F), OP.set, G, ...get(E), OP.set, F],
    ...[...get(D), ...get(T1), OP.i32Add, OP.set, E],
    ...[...get(C), OP.set, D, ...get(B), OP.set, C, ...get(A), OP.set, B],
    ...[...get(T1), ...get(X), OP.i32Add, OP.set, A],
  ];
  return [...i32(0), OP.set, T, OP.loop, 0x40, ...t1, ...t2, ...shift, ...next(4, 256), OP.end];
}

/** compress(n): for each of the n blocks at BLOCKS, the schedule, the rounds, the state added. */
function compressBody(): number[] {
  const words = [A, B, C, D, E, F, G, H];
  const loadState = words.flatMap((v, i) => [...i32(0), ...load(STATE + 4 * i), OP.set, v]);
  const addState = words.flatMap((v, i) => [
    ...[...i32(0), ...i32(0), ...load(STATE + 4 * i), ...get(v), OP.i32Add],
    ...store(STATE + 4 * i),
  ]);
  return [
    ...[...i32(BLOCKS), OP.set, P],
    ...[OP.block, 0x40, OP.loop, 0x40],
    ...[...get(N), OP.i32Eqz, OP.brIf, 1],
    ...[...schedule(), ...loadState, ...rounds(), ...addState],
    ...[...get(P), ...i32(64), OP.i32Add, OP.set, P],
    ...[...get(N), ...i32(1), OP.i32Sub, OP.set, N, OP.br, 0],
    ...[OP.end, OP.end, OP.end],
  ];
}

/** The module's bytes. */
export function sha256BlockModule(): Uint8Array<ArrayBuffer> {
  // The first 32 bits of the fractional parts of the cube roots of the first 64 primes: the
  // high halves of SHA-512's first 64 round constants.
  const constants = ROUND_CONSTANTS.slice(0, 64).flatMap((hex) => {
    const v = parseInt(hex.slice(0, 8), 16);
    return [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, v >>> 24];
  });
  return compressModule([[12, I32]], compressBody(), constants);
}
