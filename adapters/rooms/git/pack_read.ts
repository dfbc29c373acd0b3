/**
 * Reads pack indexes (version 2, with 64-bit offsets) into where each object's entry starts
 * and ends, keeps them per repository for the life of the process (a pack's content never
 * changes under its name), and applies git's deltas (OFS_DELTA and REF_DELTA entries, as
 * `git repack` writes them). Entries themselves are read by `ObjectReader`.
 *
 * Permissions: --allow-read on the room's directory.
 */
import * as fs from "node:fs";
import { Buffer } from "node:buffer";
import { join } from "node:path";
import { toHex } from "../../../core/codecs/git/objects.ts";
import { damaged } from "../../../core/codecs/git/damaged.ts";

/** What a pack's index says: where each object's entry starts and ends in the pack. */
export interface PackIndex {
  name: string;
  packPath: string;
  starts: Map<string, number>;
  ends: Map<number, number>;
}

/** The index of pack `pack-<name>` (checked against its pack's checksum), or null when the pack is gone. */
export function readPackIndex(gitdir: string, name: string): PackIndex | null {
  const base = join(gitdir, "objects", "pack", `pack-${name}`);
  let idx: Buffer, packSize: number, packSum: string;
  try {
    idx = fs.readFileSync(`${base}.idx`);
    const fd = fs.openSync(`${base}.pack`, "r");
    try {
      packSize = fs.fstatSync(fd).size;
      const sum = Buffer.alloc(20);
      fs.readSync(fd, sum, 0, 20, Math.max(0, packSize - 20));
      packSum = sum.toString("hex");
    } finally {
      fs.closeSync(fd);
    }
  } catch (e) {
    if ((e as { code?: string }).code === "ENOENT") return null; // removed by a repack
    throw e;
  }
  const n = idx.length >= 1032 ? idx.readUInt32BE(8 + 255 * 4) : -1;
  const names = 8 + 1024, offsets = names + n * 24, bigOffsets = offsets + n * 4;
  if (
    n < 0 || idx.readUInt32BE(0) !== 0xff744f63 || idx.readUInt32BE(4) !== 2 ||
    idx.length < bigOffsets + 40 ||
    idx.toString("hex", idx.length - 40, idx.length - 20) !== packSum
  ) {
    throw damaged(gitdir, `pack index "pack-${name}.idx" is not a version-2 index of its pack`);
  }
  const starts = new Map<string, number>();
  const sortedStarts: number[] = new Array(n);
  for (let i = 0; i < n; i++) {
    let at = idx.readUInt32BE(offsets + i * 4);
    if (at >= 0x80000000) at = Number(idx.readBigUInt64BE(bigOffsets + (at - 0x80000000) * 8));
    starts.set(toHex(idx, names + i * 20, names + i * 20 + 20), at);
    sortedStarts[i] = at;
  }
  sortedStarts.sort((a, b) => a - b);
  const ends = new Map<number, number>();
  sortedStarts.forEach((at, i) => ends.set(at, sortedStarts[i + 1] ?? packSize - 20));
  return { name, packPath: `${base}.pack`, starts, ends };
}

/** Pack indexes per repository (a pack's content never changes under its name). */
export const packIndexes = new Map<string, Map<string, PackIndex>>();

/** A git delta applied to its base; a delta that does not fit it is a damaged room. */
export function applyDelta(gitdir: string, base: Uint8Array, delta: Uint8Array): Uint8Array {
  let p = 0;
  const varint = () => {
    let n = 0;
    for (let shift = 1;; shift *= 128) {
      const c = delta[p++];
      n += (c & 0x7f) * shift;
      if (!(c & 0x80)) return n;
    }
  };
  const baseSize = varint();
  const out = new Uint8Array(varint());
  if (baseSize !== base.length) throw damaged(gitdir, "a delta does not fit its base");
  let n = 0;
  while (p < delta.length) {
    const op = delta[p++];
    if (op & 0x80) {
      let at = 0, len = 0;
      for (let i = 0; i < 4; i++) if (op & (1 << i)) at += delta[p++] * 2 ** (8 * i);
      for (let i = 0; i < 3; i++) if (op & (16 << i)) len += delta[p++] * 2 ** (8 * i);
      if (len === 0) len = 0x10000;
      if (at + len > base.length || n + len > out.length) {
        throw damaged(gitdir, "a delta copies beyond its base");
      }
      out.set(base.subarray(at, at + len), n);
      n += len;
    } else if (op > 0) {
      if (n + op > out.length) throw damaged(gitdir, "a delta inserts beyond its size");
      out.set(delta.subarray(p, p + op), n);
      p += op;
      n += op;
    } else {
      throw damaged(gitdir, "a delta has a zero opcode");
    }
  }
  if (n !== out.length) throw damaged(gitdir, "a delta is shorter than it says");
  return out;
}
