/**
 * The source of core/sha512_block.ts's WebAssembly module: SHA-512's block function (FIPS
 * 180-4 §6.4.2) assembled from its instructions. Not loaded by the program: assembling it in
 * a fresh process cost ~2-3 ms (the module's compile ~0.2), so the program holds its bytes,
 * and tests/core/sha512_block_test.ts checks they are what this makes. Pure.
 *
 * `compress(n)` hashes the n blocks at BLOCKS into the state at STATE (eight 64-bit words,
 * little-endian), with the message schedule at W and the round constants at K (a data
 * segment).
 */
import { BLOCKS, K, STATE, W } from "./sha512_block.ts";
import { compressModule, get, I32, i32, I64, i64, OP, uleb } from "./wasm_module.ts";

/** The first 64 bits of the fractional parts of the cube roots of the first 80 primes. */
export const ROUND_CONSTANTS = [
  "428a2f98d728ae22 7137449123ef65cd b5c0fbcfec4d3b2f e9b5dba58189dbbc 3956c25bf348b538",
  "59f111f1b605d019 923f82a4af194f9b ab1c5ed5da6d8118 d807aa98a3030242 12835b0145706fbe",
  "243185be4ee4b28c 550c7dc3d5ffb4e2 72be5d74f27b896f 80deb1fe3b1696b1 9bdc06a725c71235",
  "c19bf174cf692694 e49b69c19ef14ad2 efbe4786384f25e3 0fc19dc68b8cd5b5 240ca1cc77ac9c65",
  "2de92c6f592b0275 4a7484aa6ea6e483 5cb0a9dcbd41fbd4 76f988da831153b5 983e5152ee66dfab",
  "a831c66d2db43210 b00327c898fb213f bf597fc7beef0ee4 c6e00bf33da88fc2 d5a79147930aa725",
  "06ca6351e003826f 142929670a0e6e70 27b70a8546d22ffc 2e1b21385c26c926 4d2c6dfc5ac42aed",
  "53380d139d95b3df 650a73548baf63de 766a0abb3c77b2a8 81c2c92e47edaee6 92722c851482353b",
  "a2bfe8a14cf10364 a81a664bbc423001 c24b8b70d0f89791 c76c51a30654be30 d192e819d6ef5218",
  "d69906245565a910 f40e35855771202a 106aa07032bbd1b8 19a4c116b8d2d0c8 1e376c085141ab53",
  "2748774cdf8eeb99 34b0bcb5e19b48a8 391c0cb3c5c95a63 4ed8aa4ae3418acb 5b9cca4f7763e373",
  "682e6ff3d6b2b8a3 748f82ee5defb2fc 78a5636f43172f60 84c87814a1f0ab72 8cc702081a6439ec",
  "90befffa23631e28 a4506cebde82bde9 bef9a3f7b2c67915 c67178f2e372532b ca273eceea26619c",
  "d186b8c721c0c207 eada7dd6cde0eb1e f57d4f7fee6ed178 06f067aa72176fba 0a637dc5a2c898a6",
  "113f9804bef90dae 1b710b35131c471b 28db77f523047d84 32caab7b40c72493 3c9ebe0a15c9bebc",
  "431d67c49c100d4c 4cc5d4becb3e42b6 597f299cfc657e2a 5fcb6fab3ad6faec 6c44198c4a475817",
].join(" ").split(" ");

/** Locals: the parameter n, the block's address, the schedule index, a..h, two temporaries. */
const [N, P, T, A, B, C, D, E, F, G, H, X, T1] = Array.from({ length: 13 }, (_, i) => i);

/** i64.load / i64.store at the address on the stack plus `offset` (8-byte aligned). */
const load = (offset: number) => [OP.i64Load, 3, ...uleb(offset)];
const store = (offset: number) => [OP.i64Store, 3, ...uleb(offset)];
/** rotr(x, r1) ^ rotr(x, r2) ^ (x >>> s), or ^ rotr(x, s) when `shift` is false. */
function sigma(x: number, r1: number, r2: number, s: number, shift: boolean): number[] {
  return [
    ...get(x),
    ...i64(BigInt(r1)),
    OP.i64Rotr,
    ...get(x),
    ...i64(BigInt(r2)),
    OP.i64Rotr,
    OP.i64Xor,
    ...get(x),
    ...i64(BigInt(s)),
    shift ? OP.i64ShrU : OP.i64Rotr,
    OP.i64Xor,
  ];
}

/** x with its bytes reversed (the message is big-endian, the memory little-endian). */
function byteSwapX(): number[] {
  const swap = (mask: bigint, by: number) => [
    ...get(X),
    ...i64(BigInt(by)),
    OP.i64ShrU,
    ...i64(mask),
    OP.i64And,
    ...get(X),
    ...i64(mask),
    OP.i64And,
    ...i64(BigInt(by)),
    OP.i64Shl,
    OP.i64Or,
    OP.set,
    X,
  ];
  return [
    ...swap(0x00ff00ff00ff00ffn, 8),
    ...swap(0x0000ffff0000ffffn, 16),
    ...get(X),
    ...i64(32n),
    OP.i64Rotr,
    OP.set,
    X,
  ];
}

/** The message schedule of the block at P: W[0..15] from it, W[16..79] from those. */
function schedule(): number[] {
  return [
    ...i32(0),
    OP.set,
    T,
    OP.loop,
    0x40,
    ...[...get(P), ...get(T), OP.i32Add, ...load(0), OP.set, X],
    ...byteSwapX(),
    ...[...get(T), ...get(X), ...store(W)],
    ...[...get(T), ...i32(8), OP.i32Add, OP.tee, T, ...i32(128), OP.i32LtU, OP.brIf, 0],
    OP.end,
    OP.loop,
    0x40,
    // W[t] = σ1(W[t-2]) + W[t-7] + σ0(W[t-15]) + W[t-16]; T is 8t.
    ...get(T),
    ...[...get(T), ...load(W - 16), OP.set, X, ...sigma(X, 19, 61, 6, true)],
    ...[...get(T), ...load(W - 56), OP.i64Add],
    ...[...get(T), ...load(W - 120), OP.set, X, ...sigma(X, 1, 8, 7, true), OP.i64Add],
    ...[...get(T), ...load(W - 128), OP.i64Add],
    ...store(W),
    ...[...get(T), ...i32(8), OP.i32Add, OP.tee, T, ...i32(640), OP.i32LtU, OP.brIf, 0],
    OP.end,
  ];
}

/** The 80 rounds over a..h. */
function rounds(): number[] {
  // T1 = h + Σ1(e) + Ch(e, f, g) + K[t] + W[t]; T2 = Σ0(a) + Maj(a, b, c).
  const t1 = [
    ...get(H),
    ...sigma(E, 14, 18, 41, false),
    OP.i64Add,
    ...[...get(G), ...get(E), ...get(F), ...get(G), OP.i64Xor, OP.i64And, OP.i64Xor, OP.i64Add],
    ...[...get(T), ...load(K), OP.i64Add, ...get(T), ...load(W), OP.i64Add],
    OP.set,
    T1,
  ];
  const t2 = [
    ...sigma(A, 28, 34, 39, false),
    ...[...get(A), ...get(B), OP.i64And, ...get(C), ...get(A), ...get(B), OP.i64Or, OP.i64And],
    OP.i64Or,
    OP.i64Add,
  ];
  const shift = [
    ...[...get(G), OP.set, H, ...get(F), OP.set, G, ...get(E), OP.set, F],
    ...[...get(D), ...get(T1), OP.i64Add, OP.set, E],
    ...[...get(C), OP.set, D, ...get(B), OP.set, C, ...get(A), OP.set, B],
  ];
  return [
    ...i32(0),
    OP.set,
    T,
    OP.loop,
    0x40,
    ...t1,
    ...t2,
    OP.set,
    X,
    ...shift,
    ...[...get(T1), ...get(X), OP.i64Add, OP.set, A],
    ...[...get(T), ...i32(8), OP.i32Add, OP.tee, T, ...i32(640), OP.i32LtU, OP.brIf, 0],
    OP.end,
  ];
}

/** compress(n): for each of the n blocks at BLOCKS, the schedule, the rounds, the state added. */
function compressBody(): number[] {
  const words = [A, B, C, D, E, F, G, H];
  const loadState = words.flatMap((v, i) => [...i32(0), ...load(STATE + 8 * i), OP.set, v]);
  const addState = words.flatMap((v, i) => [
    ...i32(0),
    ...[...i32(0), ...load(STATE + 8 * i), ...get(v), OP.i64Add],
    ...store(STATE + 8 * i),
  ]);
  return [
    ...[...i32(BLOCKS), OP.set, P],
    ...[OP.block, 0x40, OP.loop, 0x40],
    ...[...get(N), OP.i32Eqz, OP.brIf, 1],
    ...schedule(),
    ...loadState,
    ...rounds(),
    ...addState,
    ...[...get(P), ...i32(128), OP.i32Add, OP.set, P],
    ...[...get(N), ...i32(1), OP.i32Sub, OP.set, N, OP.br, 0],
    ...[OP.end, OP.end, OP.end],
  ];
}

/** The module's bytes. */
export function sha512BlockModule(): Uint8Array<ArrayBuffer> {
  const constants = ROUND_CONSTANTS.flatMap((hex) => {
    const v = BigInt(`0x${hex}`);
    return Array.from({ length: 8 }, (_, i) => Number((v >> BigInt(8 * i)) & 0xffn));
  });
  // 2 i32 (P, T), 10 i64 (a..h, X, T1)
  return compressModule([[2, I32], [10, I64]], compressBody(), constants);
}
