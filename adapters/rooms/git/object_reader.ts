/**
 * One operation's view of a room's objects: the packs listed (and opened) when it began, the
 * loose objects, and the trees and commits parsed from them, kept for the process (objects
 * are content-addressed). `withObjects` runs an operation again when another process merged
 * away a pack it needed, so readers never see a half-merged room.
 *
 * Permissions: --allow-read on the room's directory.
 */
import * as fs from "node:fs";
import { Buffer } from "node:buffer";
import { join } from "node:path";
import { inflateSync } from "node:zlib";
import {
  CODE_TYPES,
  type ObjectType,
  OFS_DELTA,
  parseCommit,
  type ParsedCommit,
  parseTree,
  REF_DELTA,
  toHex,
  type TreeItem,
} from "../../../core/codecs/git/objects.ts";
import { applyDelta, type PackIndex, packIndexes, readPackIndex } from "./pack_read.ts";
import { zlibDecode } from "../../../core/codecs/git/zlib.ts";
import { damaged, hasCode } from "../../../core/codecs/git/damaged.ts";

/** A Map that forgets its oldest entries beyond `limit`. */
export class BoundedCache<V> extends Map<string, V> {
  constructor(private readonly limit: number) {
    super();
  }
  override set(key: string, value: V): this {
    if (this.size >= this.limit) {
      let drop = Math.ceil(this.limit / 4);
      for (const k of this.keys()) {
        if (drop-- <= 0) break;
        this.delete(k);
      }
    }
    return super.set(key, value);
  }
}

export const treeCache = new BoundedCache<TreeItem[]>(200_000);
const commitCache = new BoundedCache<ParsedCommit>(50_000);

/** An object could not be found or read, maybe because another process repacked: retry. */
export class ObjectGone extends Error {}

/** An operation reading this many objects of a pack reads the rest from the whole pack… */
const WHOLE_PACK_AFTER = 32;
/** …unless the pack is larger than this. */
const WHOLE_PACK_MAX = 256 * 1024 * 1024;

/** One operation's view of a repository's objects: the packs listed when it began. */
export class ObjectReader {
  private reads = new Map<PackIndex, number>();
  private whole = new Map<PackIndex, Uint8Array>();
  private loose: Set<string> | null = null;

  private constructor(
    readonly gitdir: string,
    readonly packs: PackIndex[],
    private readonly fds: Map<PackIndex, number>,
  ) {}

  /**
   * Lists the packs and opens them all at once: a pack another process removes later (when
   * it merged packs) stays readable through its open file. A pack removed between the
   * listing and the opening means a merged one appeared: list again.
   */
  static open(gitdir: string): ObjectReader {
    for (let attempt = 0;; attempt++) {
      let names: string[] = [];
      try {
        names = fs.readdirSync(join(gitdir, "objects", "pack"))
          .filter((f) => /^pack-[0-9a-f]{40}\.idx$/.test(f))
          .map((f) => f.slice(5, 45));
      } catch (e) {
        if (!hasCode(e, "ENOENT")) throw e;
      }
      const known = packIndexes.get(gitdir) ?? new Map<string, PackIndex>();
      const now = new Map<string, PackIndex>();
      const fds = new Map<PackIndex, number>();
      let gone = false;
      for (const name of names.sort()) {
        const index = known.get(name) ?? readPackIndex(gitdir, name);
        if (index) {
          try {
            fds.set(index, fs.openSync(index.packPath, "r"));
            now.set(name, index);
            continue;
          } catch (e) {
            if (!hasCode(e, "ENOENT")) throw e;
          }
        }
        gone = true;
        break;
      }
      if (!gone) {
        packIndexes.set(gitdir, now);
        return new ObjectReader(gitdir, [...now.values()], fds);
      }
      for (const fd of fds.values()) fs.closeSync(fd);
      if (attempt >= 20) throw damaged(gitdir, "its packs keep disappearing while being listed");
    }
  }

  close(): void {
    for (const fd of this.fds.values()) fs.closeSync(fd);
    this.fds.clear();
    this.whole.clear();
  }

  /** Every loose object's id (listed once per operation). */
  looseOids(): Set<string> {
    if (this.loose) return this.loose;
    this.loose = new Set();
    const objects = join(this.gitdir, "objects");
    for (const dir of fs.readdirSync(objects)) {
      if (!/^[0-9a-f]{2}$/.test(dir)) continue;
      for (const f of fs.readdirSync(join(objects, dir))) {
        if (/^[0-9a-f]{38}$/.test(f)) this.loose.add(dir + f);
      }
    }
    return this.loose;
  }

  /** Whether the repository has the object (in a pack or loose). */
  has(oid: string): boolean {
    return this.packs.some((p) => p.starts.has(oid)) || this.looseOids().has(oid);
  }

  read(oid: string): { type: ObjectType; content: Uint8Array } {
    for (const pack of this.packs) {
      const start = pack.starts.get(oid);
      if (start !== undefined) return this.readEntry(pack, start);
    }
    return this.readLoose(oid);
  }

  readLoose(oid: string): { type: ObjectType; content: Uint8Array } {
    let z: Uint8Array;
    try {
      z = fs.readFileSync(join(this.gitdir, "objects", oid.slice(0, 2), oid.slice(2)));
    } catch (e) {
      if (hasCode(e, "ENOENT")) throw new ObjectGone(`object ${oid} is missing`);
      throw e;
    }
    const raw = inflateSync(z);
    const nul = raw.indexOf(0);
    const [type, size] = raw.subarray(0, nul).toString("latin1").split(" ");
    const content = raw.subarray(nul + 1);
    if (!CODE_TYPES.includes(type as ObjectType) || Number(size) !== content.length) {
      throw damaged(this.gitdir, `loose object ${oid} is malformed`);
    }
    return { type: type as ObjectType, content };
  }

  /** `length` bytes of a pack from `at`. */
  private readAt(pack: PackIndex, at: number, length: number): Buffer {
    const buf = Buffer.allocUnsafe(length);
    const fd = this.fds.get(pack)!;
    for (let got = 0; got < length;) {
      const n = fs.readSync(fd, buf, got, length - got, at + got);
      if (n === 0) throw damaged(this.gitdir, `pack ${pack.name} is truncated`);
      got += n;
    }
    return buf;
  }

  /** A whole pack's bytes (kept for the operation). */
  packBytes(pack: PackIndex): Uint8Array {
    let whole = this.whole.get(pack);
    if (!whole) {
      whole = this.readAt(pack, 0, fs.fstatSync(this.fds.get(pack)!).size);
      this.whole.set(pack, whole);
    }
    return whole;
  }

  /** An entry's bytes: read one by one, or from the whole pack once an operation reads many. */
  private entryBytes(pack: PackIndex, start: number, end: number): Buffer {
    let whole = this.whole.get(pack);
    if (!whole) {
      const reads = (this.reads.get(pack) ?? 0) + 1;
      this.reads.set(pack, reads);
      if (reads === WHOLE_PACK_AFTER && fs.fstatSync(this.fds.get(pack)!).size <= WHOLE_PACK_MAX) {
        whole = this.packBytes(pack);
      }
    }
    if (whole) return Buffer.from(whole.buffer, whole.byteOffset + start, end - start);
    return this.readAt(pack, start, end - start);
  }

  private readEntry(pack: PackIndex, start: number): { type: ObjectType; content: Uint8Array } {
    const end = pack.ends.get(start);
    if (end === undefined || end <= start) {
      throw damaged(this.gitdir, `pack ${pack.name} has no entry at ${start}`);
    }
    const buf = this.entryBytes(pack, start, end);
    let p = 0;
    let c = buf[p++];
    const code = (c >> 4) & 7;
    let size = c & 15;
    for (let shift = 16; c & 0x80; shift *= 128) {
      c = buf[p++];
      size += (c & 0x7f) * shift;
    }
    if (code === OFS_DELTA || code === REF_DELTA) {
      let base: { type: ObjectType; content: Uint8Array };
      if (code === OFS_DELTA) {
        c = buf[p++];
        let distance = c & 0x7f;
        while (c & 0x80) {
          c = buf[p++];
          distance = (distance + 1) * 128 + (c & 0x7f);
        }
        base = this.readEntry(pack, start - distance);
      } else {
        base = this.read(toHex(buf, p, p + 20));
        p += 20;
      }
      const delta = zlibDecode(buf.subarray(p), size);
      return { type: base.type, content: applyDelta(this.gitdir, base.content, delta) };
    }
    const type = CODE_TYPES[code];
    const content = zlibDecode(buf.subarray(p), size);
    if (!type || content.length !== size) {
      throw damaged(this.gitdir, `pack ${pack.name} has a malformed entry at ${start}`);
    }
    return { type, content };
  }

  tree(oid: string): TreeItem[] {
    let items = treeCache.get(oid);
    if (!items) {
      const { type, content } = this.read(oid);
      if (type !== "tree") throw damaged(this.gitdir, `object ${oid} is a ${type}, not a tree`);
      items = parseTree(content);
      treeCache.set(oid, items);
    }
    return items;
  }

  commit(oid: string): ParsedCommit {
    let commit = commitCache.get(oid);
    if (!commit) {
      const { type, content } = this.read(oid);
      if (type !== "commit") throw damaged(this.gitdir, `object ${oid} is a ${type}, not a commit`);
      commit = parseCommit(content);
      commitCache.set(oid, commit);
    }
    return commit;
  }

  blob(oid: string): Uint8Array {
    const { type, content } = this.read(oid);
    if (type !== "blob") throw damaged(this.gitdir, `object ${oid} is a ${type}, not a blob`);
    return content;
  }
}

/**
 * Runs `f` with a fresh view of the repository's objects; when an object or pack it needed
 * was removed meanwhile (another process consolidated the packs), runs it once more.
 */
export async function withObjects<T>(
  gitdir: string,
  f: (db: ObjectReader) => T | Promise<T>,
): Promise<T> {
  for (let attempt = 0;; attempt++) {
    const db = ObjectReader.open(gitdir);
    try {
      return await f(db);
    } catch (e) {
      if (!(e instanceof ObjectGone)) throw e;
      if (attempt >= 5) throw damaged(gitdir, e.message);
    } finally {
      db.close();
    }
  }
}
