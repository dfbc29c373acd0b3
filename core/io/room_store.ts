/**
 * Rooms: one git repository per room, holding its workspace (`workflows/<name>/…` bundles,
 * tables, anything a client writes). Versioned, forkable, reviewable as diffs.
 *
 * The git store keeps each room as a bare repository under `<home>/rooms/<slug>/` (clone it
 * with `git clone <home>/rooms/<slug>` to browse). A write builds the new trees from the
 * head's in memory, writes the commit's new objects as ONE packfile with its index (temporary
 * names, synced, renamed in), then moves the branch: a process killed mid-write leaves the
 * room at its previous commit. There is no index or working tree to drift or corrupt. One
 * pack per commit instead of one file per object (isomorphic-git's way, ~2 ms a file on a
 * slow disk): 1,000 files commit in ~0.1 s instead of 9-16 s. Small packs are merged when a
 * room has many. The objects are read by the reader below (packs, deltas, loose objects,
 * packed refs), so a room git itself repacked or an older loose-object room reads too.
 *
 * Permissions: --allow-read and --allow-write on the rooms directory.
 */
import * as fs from "node:fs";
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { crc32, deflateSync, inflateSync } from "node:zlib";
import { DvergrError } from "../errors.ts";
import { type FileMap, relativePathProblem, sortedFiles } from "../bundle/file_map.ts";

export interface CommitInfo {
  id: string;
  message: string;
  /** ISO time of the commit. */
  at: string;
  parents: string[];
}

export interface RoomStore {
  /** Creates an empty room (one initial commit); false when it already exists. */
  createRoom(slug: string): Promise<boolean>;
  hasRoom(slug: string): Promise<boolean>;
  /** Every room's slug, sorted. */
  listRooms(): Promise<string[]>;
  /**
   * Writes exactly the given paths as one commit (`null` removes a path) and returns the
   * commit id; when the changes leave the workspace as it was, makes no commit and returns
   * the current head.
   */
  writeFiles(slug: string, changes: Map<string, string | null>, message: string): Promise<string>;
  /** The workspace at the head (or only the files under `prefix/`, keeping full paths). */
  readFiles(slug: string, prefix?: string): Promise<FileMap>;
  /**
   * Makes the directory `prefix/` hold exactly `files` (paths relative to it): writes what
   * differs, removes what `files` lacks, in one commit. Returns the commit id, or null when
   * the directory already held exactly these files (no commit). Used to install a bundle.
   */
  replaceDir(slug: string, prefix: string, files: FileMap, message: string): Promise<string | null>;
  /** Commits from the head back to the first. */
  log(slug: string): Promise<CommitInfo[]>;
}

const SLUG = /^[a-z0-9][a-z0-9-]{0,63}$/;

/** Refuses a room slug that is not lowercase letters, digits and dashes. */
export function checkSlug(slug: string): void {
  if (!SLUG.test(slug)) {
    throw new DvergrError(
      "ROOM_INVALID",
      `Cannot use room "${slug}": a room slug is lowercase letters, digits and dashes (at most 64)`,
      { hint: "Choose a slug such as `books` or `invoice-coding`" },
    );
  }
}

function checkChanges(changes: Map<string, string | null>): void {
  for (const path of changes.keys()) {
    const problem = relativePathProblem(path);
    if (problem) {
      throw new DvergrError(
        "PATH_INVALID",
        `Cannot write "${path}" to a room: the path ${problem}`,
        {
          hint: "Room paths are relative POSIX paths such as `workflows/x/workflow.edn`",
        },
      );
    }
  }
}

function noRoom(slug: string): DvergrError {
  return new DvergrError("NOT_FOUND", `Cannot open room "${slug}": no such room in this home`, {
    hint: "Benchmark a bundle directory to create its room, or check the --home",
  });
}

function underPrefix(path: string, prefix?: string): boolean {
  if (!prefix) return true;
  const p = prefix.endsWith("/") ? prefix : prefix + "/";
  return path.startsWith(p);
}

/** Serialises work per key within this process. */
function keyedMutex() {
  const tails = new Map<string, Promise<unknown>>();
  return <T>(key: string, f: () => Promise<T>): Promise<T> => {
    const prev = tails.get(key) ?? Promise.resolve();
    const next = prev.then(f, f);
    const tail = next.catch(() => {});
    tails.set(key, tail);
    tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key);
    });
    return next;
  };
}

/** An in-memory room store: the same contract, snapshots in a Map (tests). */
export function memoryRoomStore(clock: () => Date = () => new Date()): RoomStore {
  const rooms = new Map<string, { commit: CommitInfo; files: FileMap }[]>();
  const head = (slug: string) => {
    const r = rooms.get(slug);
    if (!r) throw noRoom(slug);
    return r;
  };
  const commitId = (parent: string | null, message: string, files: FileMap) => {
    const h = createHash("sha1").update(JSON.stringify([parent, message, [...sortedFiles(files)]]));
    return h.update(String(rooms.size) + clock().toISOString()).digest("hex");
  };
  return {
    async createRoom(slug) {
      await Promise.resolve();
      checkSlug(slug);
      if (rooms.has(slug)) return false;
      const files: FileMap = new Map();
      const message = `Create room ${slug}`;
      rooms.set(slug, [{
        commit: {
          id: commitId(null, message, files),
          message,
          at: clock().toISOString(),
          parents: [],
        },
        files,
      }]);
      return true;
    },
    hasRoom: (slug) => Promise.resolve(rooms.has(slug)),
    listRooms: () => Promise.resolve([...rooms.keys()].sort()),
    async writeFiles(slug, changes, message) {
      await Promise.resolve();
      checkChanges(changes);
      const history = head(slug);
      const last = history[history.length - 1];
      const files = new Map(last.files);
      for (const [p, text] of changes) {
        if (text === null) files.delete(p);
        else files.set(p, text);
      }
      const same = files.size === last.files.size &&
        [...files].every(([p, t]) => last.files.get(p) === t);
      if (same) return last.commit.id;
      const id = commitId(last.commit.id, message, files);
      history.push({
        commit: { id, message, at: clock().toISOString(), parents: [last.commit.id] },
        files,
      });
      return id;
    },
    async readFiles(slug, prefix) {
      await Promise.resolve();
      const history = head(slug);
      const out: FileMap = new Map();
      for (const [p, t] of sortedFiles(history[history.length - 1].files)) {
        if (underPrefix(p, prefix)) out.set(p, t);
      }
      return Promise.resolve(out);
    },
    async replaceDir(slug, prefix, files, message) {
      await Promise.resolve();
      const p = dirPrefix(prefix);
      const history = head(slug);
      const current = history[history.length - 1].files;
      const changes = dirChanges(p, files, (path) => current.get(path), current.keys());
      if (changes.size === 0) return null;
      return await this.writeFiles(slug, changes, message);
    },
    log(slug) {
      return Promise.resolve(head(slug).map((h) => h.commit).reverse());
    },
  };
}

function dirPrefix(prefix: string): string {
  const p = prefix.endsWith("/") ? prefix : prefix + "/";
  const problem = relativePathProblem(p.slice(0, -1));
  if (problem) {
    throw new DvergrError(
      "PATH_INVALID",
      `Cannot use room directory "${prefix}": the path ${problem}`,
      {
        hint: "Room paths are relative POSIX paths such as `workflows/x`",
      },
    );
  }
  return p;
}

/** The changes that make `prefix` hold exactly `files`, given what is there now. */
function dirChanges<T>(
  prefix: string,
  files: FileMap,
  current: (path: string) => T | undefined,
  currentPaths: Iterable<string>,
  same: (text: string, now: T) => boolean = (text, now) => text === (now as unknown),
): Map<string, string | null> {
  const changes = new Map<string, string | null>();
  for (const [p, text] of files) {
    const now = current(prefix + p);
    if (now === undefined || !same(text, now)) changes.set(prefix + p, text);
  }
  for (const p of currentPaths) {
    if (p.startsWith(prefix) && !files.has(p.slice(prefix.length))) changes.set(p, null);
  }
  return changes;
}

/** The git object id of a blob holding `text` (UTF-8). */
function gitBlobOid(text: string): string {
  return objectId("blob", new TextEncoder().encode(text));
}

// ---------------------------------------------------------------------------------------------
// Git objects. A room's objects live in packfiles (`objects/pack/pack-<sha>.pack` + `.idx`,
// format version 2); loose objects (`objects/xx/…`, written by earlier versions or by git
// itself) are read too. Objects are content-addressed, so what is parsed from them (pack
// indexes, trees, commits) can be kept for the life of the process.

type ObjectType = "commit" | "tree" | "blob" | "tag";
const TYPE_CODES: Record<ObjectType, number> = { commit: 1, tree: 2, blob: 3, tag: 4 };
const CODE_TYPES: (ObjectType | undefined)[] = [undefined, "commit", "tree", "blob", "tag"];
const OFS_DELTA = 6;
const REF_DELTA = 7;

interface GitObject {
  oid: string;
  type: ObjectType;
  content: Uint8Array;
}

function objectId(type: ObjectType, content: Uint8Array): string {
  return createHash("sha1").update(`${type} ${content.length}\0`).update(content).digest("hex");
}

function gitObject(type: ObjectType, content: Uint8Array): GitObject {
  return { oid: objectId(type, content), type, content };
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** The hex of `bytes[start, end)` (faster than Buffer's for object ids). */
function toHex(bytes: Uint8Array, start: number, end: number): string {
  let out = "";
  for (let i = start; i < end; i++) out += HEX[bytes[i]];
  return out;
}

/** Writes the bytes of a hex object id into `target` at `at`. */
function putHex(target: Uint8Array, at: number, hex: string): void {
  for (let i = 0; i < hex.length; i += 2) {
    target[at + i / 2] = (nibble(hex.charCodeAt(i)) << 4) | nibble(hex.charCodeAt(i + 1));
  }
}

function nibble(c: number): number {
  return c <= 57 ? c - 48 : c - 87; // "0"-"9", "a"-"f"
}

/** Below this size zlib's fixed cost per call outweighs what it saves: such objects are stored. */
const STORE_BELOW = 512;

function adler32(data: Uint8Array): number {
  let a = 1, b = 0;
  for (let i = 0; i < data.length;) {
    const stop = Math.min(i + 3800, data.length); // no overflow before the modulo
    for (; i < stop; i++) {
      a += data[i];
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  return ((b << 16) | a) >>> 0;
}

/** Inflates a zlib stream; streams of stored blocks (ours, for small objects) are copied out. */
function zlibDecode(z: Uint8Array, size: number): Uint8Array {
  if (z.length >= 11 && (z[0] & 0x0f) === 8 && !(z[1] & 0x20) && ((z[2] >> 1) & 3) === 0) {
    const out = new Uint8Array(size);
    let p = 2, n = 0;
    for (;;) {
      const head = z[p];
      if (((head >> 1) & 3) !== 0 || p + 5 > z.length) break; // not all stored: let zlib do it
      const len = z[p + 1] | (z[p + 2] << 8);
      if (((z[p + 3] | (z[p + 4] << 8)) ^ 0xffff) !== len || n + len > size) break;
      out.set(z.subarray(p + 5, p + 5 + len), n);
      n += len;
      p += 5 + len;
      if (head & 1) {
        const sum = p + 4 <= z.length
          ? new DataView(z.buffer, z.byteOffset + p, 4).getUint32(0)
          : -1;
        if (n === size && sum === adler32(out)) return out;
        break;
      }
    }
  }
  return inflateSync(z);
}

/** The distance to an OFS_DELTA's base, in git's offset encoding. */
function ofsBytes(distance: number): Uint8Array {
  const bytes = [distance % 128];
  let n = Math.floor(distance / 128);
  while (n > 0) {
    n -= 1;
    bytes.unshift(0x80 | (n % 128));
    n = Math.floor(n / 128);
  }
  return Uint8Array.from(bytes);
}

interface BuiltPack {
  /** The pack's checksum in hex: its file names are `pack-<name>.pack` and `.idx`. */
  name: string;
  pack: Uint8Array;
  idx: Uint8Array;
  /** Each object's entry, in pack order. */
  entries: { oid: string; offset: number }[];
}

/**
 * Builds a packfile (version 2, no deltas of its own) and its version-2 index, in one growing
 * buffer (a commit of 20,000 files is some 80,000 small objects).
 */
class PackBuilder {
  private buf = new Uint8Array(1 << 16);
  private size = 12;
  private entries: { oid: string; offset: number; crc: number }[] = [];

  /** Where the next entry starts. */
  get offset(): number {
    return this.size;
  }

  get count(): number {
    return this.entries.length;
  }

  private reserve(n: number): void {
    if (this.size + n <= this.buf.length) return;
    let capacity = this.buf.length * 2;
    while (capacity < this.size + n) capacity *= 2;
    const grown = new Uint8Array(capacity);
    grown.set(this.buf.subarray(0, this.size));
    this.buf = grown;
  }

  private put(bytes: Uint8Array): void {
    this.reserve(bytes.length);
    this.buf.set(bytes, this.size);
    this.size += bytes.length;
  }

  private entered(oid: string, offset: number): number {
    this.entries.push({ oid, offset, crc: crc32(this.buf.subarray(offset, this.size)) });
    return offset;
  }

  /** Adds an entry given as its raw bytes (header and zlib data); returns its offset. */
  addRaw(oid: string, parts: Uint8Array[]): number {
    const offset = this.size;
    for (const part of parts) this.put(part);
    return this.entered(oid, offset);
  }

  /** Adds an object: its type-and-size header, then its content as a zlib stream. */
  addObject(object: GitObject): number {
    const offset = this.size;
    const { content } = object;
    const size = content.length;
    this.reserve(16 + 11 + size);
    const buf = this.buf;
    let p = this.size;
    let rest = Math.floor(size / 16);
    buf[p++] = (TYPE_CODES[object.type] << 4) | (size % 16) | (rest > 0 ? 0x80 : 0);
    while (rest > 0) {
      const next = Math.floor(rest / 128);
      buf[p++] = (rest % 128) | (next > 0 ? 0x80 : 0);
      rest = next;
    }
    if (size >= STORE_BELOW) {
      this.size = p;
      // A tree is mostly object ids, which do not compress: the fastest level loses little.
      this.put(deflateSync(content, { level: object.type === "tree" ? 1 : 6 }));
    } else {
      // A zlib stream of one stored block: zlib's fixed cost per call outweighs what it
      // would save on an object this small.
      buf[p++] = 0x78;
      buf[p++] = 0x01;
      buf[p++] = 0x01; // the final block, stored
      buf[p++] = size & 0xff;
      buf[p++] = size >>> 8;
      buf[p++] = ~size & 0xff;
      buf[p++] = (~size >>> 8) & 0xff;
      buf.set(content, p);
      p += size;
      const sum = adler32(content);
      buf[p++] = sum >>> 24;
      buf[p++] = (sum >>> 16) & 0xff;
      buf[p++] = (sum >>> 8) & 0xff;
      buf[p++] = sum & 0xff;
      this.size = p;
    }
    return this.entered(object.oid, offset);
  }

  finish(): BuiltPack {
    const n = this.entries.length;
    this.reserve(20);
    const view = new DataView(this.buf.buffer);
    this.buf.set([0x50, 0x41, 0x43, 0x4b]); // "PACK"
    view.setUint32(4, 2);
    view.setUint32(8, n);
    const trailer = createHash("sha1").update(this.buf.subarray(0, this.size)).digest();
    this.buf.set(trailer, this.size);
    const pack = this.buf.subarray(0, this.size + 20);

    // By id; the first 8 hex digits as a number settle almost every comparison.
    const sorted = this.entries.map((e) => ({ ...e, key: parseInt(e.oid.slice(0, 8), 16) }))
      .sort((a, b) => a.key - b.key || (a.oid < b.oid ? -1 : a.oid > b.oid ? 1 : 0));
    const large = sorted.filter((e) => e.offset >= 0x80000000).length;
    const idx = new Uint8Array(8 + 1024 + n * 28 + large * 8 + 40);
    const out = new DataView(idx.buffer);
    out.setUint32(0, 0xff744f63);
    out.setUint32(4, 2);
    const fanout = new Array(256).fill(0);
    for (const e of sorted) fanout[parseInt(e.oid.slice(0, 2), 16)]++;
    let total = 0;
    for (let i = 0; i < 256; i++) {
      total += fanout[i];
      out.setUint32(8 + i * 4, total);
    }
    const names = 8 + 1024, crcs = names + n * 20, offsets = crcs + n * 4;
    const bigOffsets = offsets + n * 4;
    let big = 0;
    sorted.forEach((e, i) => {
      putHex(idx, names + i * 20, e.oid);
      out.setUint32(crcs + i * 4, e.crc);
      if (e.offset < 0x80000000) {
        out.setUint32(offsets + i * 4, e.offset);
      } else {
        out.setUint32(offsets + i * 4, (0x80000000 | big) >>> 0);
        out.setBigUint64(bigOffsets + big * 8, BigInt(e.offset));
        big++;
      }
    });
    const end = bigOffsets + big * 8;
    idx.set(trailer, end);
    idx.set(createHash("sha1").update(idx.subarray(0, end + 20)).digest(), end + 20);
    return { name: trailer.toString("hex"), pack, idx, entries: this.entries };
  }
}

async function writeDurable(path: string, data: Uint8Array): Promise<void> {
  const file = await Deno.open(path, { write: true, createNew: true });
  try {
    for (let at = 0; at < data.length;) at += await file.write(data.subarray(at));
    await file.syncData();
  } finally {
    file.close();
  }
}

/**
 * Puts a pack in place: both files are written under temporary names and synced, then the
 * pack and last its index are renamed in (readers find packs by their index).
 */
async function installPack(gitdir: string, built: BuiltPack): Promise<void> {
  const dir = join(gitdir, "objects", "pack");
  await Deno.mkdir(dir, { recursive: true });
  const id = crypto.randomUUID();
  const tmpPack = join(dir, `tmp_pack_${id}`);
  const tmpIdx = join(dir, `tmp_idx_${id}`);
  try {
    await writeDurable(tmpPack, built.pack);
    await writeDurable(tmpIdx, built.idx);
    await Deno.rename(tmpPack, join(dir, `pack-${built.name}.pack`));
    await Deno.rename(tmpIdx, join(dir, `pack-${built.name}.idx`));
  } catch (e) {
    await Deno.remove(tmpPack).catch(() => {});
    await Deno.remove(tmpIdx).catch(() => {});
    throw e;
  }
  // What the index says is known already: the next reader need not parse it.
  const starts = new Map<string, number>();
  const ends = new Map<number, number>();
  built.entries.forEach(({ oid, offset }, i) => {
    starts.set(oid, offset);
    ends.set(offset, built.entries[i + 1]?.offset ?? built.pack.length - 20);
  });
  const known = packIndexes.get(gitdir) ?? new Map<string, PackIndex>();
  known.set(built.name, {
    name: built.name,
    packPath: join(dir, `pack-${built.name}.pack`),
    starts,
    ends,
  });
  packIndexes.set(gitdir, known);
}

/** What a pack's index says: where each object's entry starts and ends in the pack. */
interface PackIndex {
  name: string;
  packPath: string;
  starts: Map<string, number>;
  ends: Map<number, number>;
}

function readPackIndex(gitdir: string, name: string): PackIndex | null {
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
const packIndexes = new Map<string, Map<string, PackIndex>>();

/** A Map that forgets its oldest entries beyond `limit`. */
class BoundedCache<V> extends Map<string, V> {
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

interface TreeItem {
  mode: string;
  name: string;
  oid: string;
  isTree: boolean;
  /** The name's UTF-8 and the id's 20 bytes, kept once known (a rewritten tree reuses them). */
  nameBytes?: Uint8Array;
  oidBytes?: Uint8Array;
}

interface ParsedCommit {
  tree: string;
  parents: string[];
  /** Committer time, seconds since the epoch. */
  time: number;
  message: string;
}

const treeCache = new BoundedCache<TreeItem[]>(200_000);
const commitCache = new BoundedCache<ParsedCommit>(50_000);

/** An object could not be found or read, maybe because another process repacked: retry. */
class ObjectGone extends Error {}

function damaged(gitdir: string, what: string): DvergrError {
  const slug = gitdir.split(/[\\/]/).pop();
  return new DvergrError("ROOM_INVALID", `Cannot read room "${slug}": ${what}`, {
    hint: `The room's repository is damaged; \`git -C ${gitdir} fsck\` lists what is wrong`,
  });
}

function hasCode(e: unknown, code: string): boolean {
  return (e as { code?: string })?.code === code;
}

/** An operation reading this many objects of a pack reads the rest from the whole pack… */
const WHOLE_PACK_AFTER = 32;
/** …unless the pack is larger than this. */
const WHOLE_PACK_MAX = 256 * 1024 * 1024;

/** One operation's view of a repository's objects: the packs listed when it began. */
class ObjectReader {
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

function applyDelta(gitdir: string, base: Uint8Array, delta: Uint8Array): Uint8Array {
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

/**
 * Runs `f` with a fresh view of the repository's objects; when an object or pack it needed
 * was removed meanwhile (another process consolidated the packs), runs it once more.
 */
async function withObjects<T>(gitdir: string, f: (db: ObjectReader) => T | Promise<T>): Promise<T> {
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

const decoder = new TextDecoder();
/** File texts keep a leading byte order mark: it is part of the file and of the content id. */
const textDecoder = new TextDecoder("utf-8", { ignoreBOM: true });
const encoder = new TextEncoder();

function parseTree(content: Uint8Array): TreeItem[] {
  const buf = Buffer.from(content.buffer, content.byteOffset, content.length);
  const items: TreeItem[] = [];
  for (let p = 0; p < buf.length;) {
    const space = buf.indexOf(0x20, p);
    const nul = buf.indexOf(0, space);
    const mode = buf.toString("latin1", p, space);
    items.push({
      mode,
      name: buf.toString("utf8", space + 1, nul),
      oid: toHex(buf, nul + 1, nul + 21),
      isTree: mode === "40000",
      nameBytes: content.subarray(space + 1, nul),
      oidBytes: content.subarray(nul + 1, nul + 21),
    });
    p = nul + 21;
  }
  return items;
}

/** A tree object's content: entries in git's order (names as bytes, a tree's with a `/`). */
function encodeTree(items: TreeItem[]): Uint8Array {
  let size = 0;
  for (const e of items) {
    e.nameBytes ??= utf8(e.name);
    size += e.mode.length + 1 + e.nameBytes.length + 1 + 20;
  }
  // Mostly in order already (a tree read, then changed): a near-linear sort.
  items.sort((a, b) => compareNames(a.nameBytes!, a.isTree, b.nameBytes!, b.isTree));
  const out = new Uint8Array(size);
  let p = 0;
  for (const e of items) {
    for (let i = 0; i < e.mode.length; i++) out[p++] = e.mode.charCodeAt(i);
    out[p++] = 0x20;
    out.set(e.nameBytes!, p);
    p += e.nameBytes!.length;
    out[p++] = 0;
    if (e.oidBytes) out.set(e.oidBytes, p);
    else putHex(out, p, e.oid);
    e.oidBytes = out.subarray(p, p + 20);
    p += 20;
  }
  return out;
}

/** UTF-8 bytes of a name; ASCII names (most) without a call into the encoder. */
function utf8(name: string): Uint8Array {
  const out = new Uint8Array(name.length);
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c >= 0x80) return encoder.encode(name);
    out[i] = c;
  }
  return out;
}

/** Git's order of tree entries: bytewise, a tree's name compared as if it ended with "/". */
function compareNames(a: Uint8Array, aTree: boolean, b: Uint8Array, bTree: boolean): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  const nextA = a.length > n ? a[n] : aTree ? 0x2f : 0;
  const nextB = b.length > n ? b[n] : bTree ? 0x2f : 0;
  return nextA - nextB;
}

function parseCommit(content: Uint8Array): ParsedCommit {
  const text = decoder.decode(content);
  const split = text.indexOf("\n\n");
  const headers = (split < 0 ? text : text.slice(0, split)).split("\n");
  const commit: ParsedCommit = {
    tree: "",
    parents: [],
    time: 0,
    message: split < 0 ? "" : text.slice(split + 2),
  };
  for (const line of headers) {
    if (line.startsWith("tree ")) commit.tree = line.slice(5);
    else if (line.startsWith("parent ")) commit.parents.push(line.slice(7));
    else if (line.startsWith("committer ")) {
      commit.time = Number(/> (\d+) [+-]\d{4}$/.exec(line)?.[1] ?? 0);
    }
  }
  return commit;
}

/** As git (and isomorphic-git) store it: no CR, no leading blank lines, one final newline. */
function normalizeMessage(message: string): string {
  return message.replace(/\r/g, "").replace(/^\n+/, "").replace(/\n+$/, "") + "\n";
}

const AUTHOR = "dvergr <dvergr@localhost>";
const BRANCH = "refs/heads/main";

function commitObject(tree: string, parents: string[], message: string, when: Date): GitObject {
  const who = `${AUTHOR} ${Math.floor(when.getTime() / 1000)} +0000`;
  const text = `tree ${tree}\n${parents.map((p) => `parent ${p}\n`).join("")}` +
    `author ${who}\ncommitter ${who}\n\n${normalizeMessage(message)}`;
  return gitObject("commit", encoder.encode(text));
}

/** The commit the branch points at (a loose ref, else `packed-refs`, as git packs them). */
function readHead(gitdir: string): string {
  try {
    const oid = fs.readFileSync(join(gitdir, BRANCH), "utf8").trim();
    if (/^[0-9a-f]{40}$/.test(oid)) return oid;
    throw damaged(gitdir, `${BRANCH} holds "${oid.slice(0, 60)}", not a commit id`);
  } catch (e) {
    if (!hasCode(e, "ENOENT")) throw e;
  }
  try {
    for (const line of fs.readFileSync(join(gitdir, "packed-refs"), "utf8").split("\n")) {
      if (line.endsWith(` ${BRANCH}`)) return line.slice(0, 40);
    }
  } catch (e) {
    if (!hasCode(e, "ENOENT")) throw e;
  }
  throw damaged(gitdir, `the branch ${BRANCH} is missing`);
}

/** A branch lock not touched for this long was left by a process that died holding it. */
const STALE_LOCK_MS = 10_000;
/** A holder touches its lock this often (a long write is not taken for a dead one). */
const LOCK_HEARTBEAT_MS = 2_000;
/** How long a writer waits for a live lock before giving up. */
const LOCK_WAIT_MS = 120_000;

/** The branch, locked as git locks it: `refs/heads/main.lock`, created exclusively. */
interface BranchLock {
  /**
   * Moves the branch from `from` to `to` (the lock file, written and synced, renamed over the
   * ref) and releases the lock; false, the branch unmoved, when it no longer points at `from`.
   */
  move(from: string, to: string): Promise<boolean>;
  /** Releases the lock without moving the branch (nothing when it moved). */
  release(): Promise<void>;
}

/**
 * Takes the branch lock of a repository (git itself honours it too). A lock left by a dead
 * process is taken over once stale; a live one is waited for.
 */
async function lockBranch(gitdir: string): Promise<BranchLock> {
  const ref = join(gitdir, BRANCH);
  const lockPath = `${ref}.lock`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  let file: Deno.FsFile | null = null;
  let madeDir = false;
  while (!file) {
    try {
      file = await Deno.open(lockPath, { write: true, createNew: true });
    } catch (e) {
      if (e instanceof Deno.errors.NotFound && !madeDir) {
        // `git pack-refs` may leave refs/heads empty, and something may remove it then.
        await Deno.mkdir(join(gitdir, "refs", "heads"), { recursive: true });
        madeDir = true;
        continue;
      }
      if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
      const mtime = await Deno.stat(lockPath).then((s) => s.mtime?.getTime() ?? 0, () => null);
      if (mtime !== null && Date.now() - mtime > STALE_LOCK_MS) {
        await Deno.remove(lockPath).catch(() => {});
      } else if (Date.now() > deadline) {
        const slug = gitdir.split(/[\\/]/).pop();
        throw new DvergrError(
          "CONFLICT",
          `Cannot commit to room "${slug}": its branch stays locked by another process ("${lockPath}")`,
          { hint: "Retry when the other writer is done", exit: 1 },
        );
      } else {
        await new Promise((r) => setTimeout(r, 5 + Math.random() * 20));
      }
    }
  }
  const held = file;
  let closed = false, finished = false;
  const heartbeat = setInterval(() => {
    const now = new Date();
    Deno.utime(lockPath, now, now).catch(() => {});
  }, LOCK_HEARTBEAT_MS);
  const close = () => {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    held.close();
  };
  const release = async () => {
    if (finished) return;
    finished = true;
    close();
    await Deno.remove(lockPath).catch(() => {});
  };
  return {
    async move(from, to) {
      if (finished) throw new Error("BranchLock.move() after the lock was released");
      try {
        if (readHead(gitdir) !== from) return false;
        await held.write(encoder.encode(`${to}\n`));
        await held.syncData();
        close();
        await Deno.rename(lockPath, ref);
        finished = true;
        return true;
      } finally {
        await release();
      }
    },
    release,
  };
}

/** Makes an empty bare repository (what `git init --bare` leaves, on branch main). */
async function initBare(gitdir: string): Promise<void> {
  for (const sub of ["objects/pack", "objects/info", "refs/heads", "refs/tags"]) {
    await Deno.mkdir(join(gitdir, sub), { recursive: true });
  }
  await Deno.writeTextFile(join(gitdir, "HEAD"), `ref: ${BRANCH}\n`);
  await Deno.writeTextFile(
    join(gitdir, "config"),
    "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n",
  );
}

/**
 * The packs to merge: the smallest first, then each next one while it is less than twice
 * what is merged so far, as git's `repack --geometric=2` does; so a room's big pack is copied
 * only when the small ones add up to half of it, and a commit costs the same in a big room as
 * in a small one. At least enough are taken to leave `maxPacks / 2` packs.
 */
function packsToMerge(packs: PackIndex[], loose: number, maxPacks: number): PackIndex[] {
  const bySize = [...packs].sort((a, b) => a.starts.size - b.starts.size);
  const atLeast = Math.max(2, packs.length - Math.floor(maxPacks / 2));
  let merged = loose;
  let n = 0;
  while (n < bySize.length && (n < atLeast || bySize[n].starts.size < 2 * merged)) {
    merged += bySize[n].starts.size;
    n++;
  }
  return bySize.slice(0, n);
}

/**
 * Merges the small packs (`packsToMerge`; never `.keep` ones) and every loose object into one
 * pack, then removes what it merged. Entries are copied as they are (no inflating, no
 * deflating); an OFS_DELTA's distance to its base is rewritten for its new place. Readers
 * that listed the old packs retry (`withObjects`); nothing is removed before the merged pack
 * is in place.
 */
async function consolidate(gitdir: string, maxPacks: number): Promise<void> {
  const packDir = join(gitdir, "objects", "pack");
  await withObjects(gitdir, async (db) => {
    const builder = new PackBuilder();
    const placed = new Map<string, number>();
    const merged: PackIndex[] = [];
    const loose = [...db.looseOids()];
    const packs = db.packs.filter((p) => !fs.existsSync(join(packDir, `pack-${p.name}.keep`)));
    const chosen = packsToMerge(packs, loose.length, maxPacks);
    if (chosen.length < 2 && loose.length === 0) return;
    for (const pack of chosen) {
      const bytes = db.packBytes(pack);
      merged.push(pack);
      const entries = [...pack.starts].sort((a, b) => a[1] - b[1]);
      const moved = new Map<number, number>();
      for (const [oid, start] of entries) {
        const already = placed.get(oid);
        if (already !== undefined) {
          moved.set(start, already);
          continue;
        }
        const raw = bytes.subarray(start, pack.ends.get(start));
        let parts = [raw];
        const code = (raw[0] >> 4) & 7;
        if (code === REF_DELTA) {
          // Its base may be in a pack left out of the merge: store the object whole.
          const { type, content } = db.read(oid);
          const at = builder.addObject({ oid, type, content });
          moved.set(start, at);
          placed.set(oid, at);
          continue;
        }
        if (code === OFS_DELTA) {
          let p = 1;
          while (raw[p - 1] & 0x80) p++;
          const headerEnd = p;
          let c = raw[p++];
          let distance = c & 0x7f;
          while (c & 0x80) {
            c = raw[p++];
            distance = (distance + 1) * 128 + (c & 0x7f);
          }
          const base = moved.get(start - distance);
          if (base === undefined) {
            throw damaged(gitdir, `pack ${pack.name} has a delta without base`);
          }
          parts = [raw.subarray(0, headerEnd), ofsBytes(builder.offset - base), raw.subarray(p)];
        }
        const at = builder.addRaw(oid, parts);
        moved.set(start, at);
        placed.set(oid, at);
      }
    }
    for (const oid of loose) {
      if (placed.has(oid)) continue;
      const { type, content } = db.readLoose(oid);
      placed.set(oid, builder.addObject({ oid, type, content }));
    }
    if (builder.count === 0) return;
    const built = builder.finish();
    await installPack(gitdir, built);
    for (const pack of merged) {
      if (pack.name === built.name) continue;
      // The index first: readers (and git) find packs by it.
      for (const ext of ["idx", "pack", "rev", "bitmap", "mtimes"]) {
        await Deno.remove(join(packDir, `pack-${pack.name}.${ext}`)).catch(() => {});
      }
    }
    for (const oid of loose) {
      await Deno.remove(join(gitdir, "objects", oid.slice(0, 2), oid.slice(2))).catch(() => {});
    }
    for (const dir of new Set(loose.map((oid) => oid.slice(0, 2)))) {
      await Deno.remove(join(gitdir, "objects", dir)).catch(() => {}); // only when empty
    }
    // Temporary files of writers that died mid-pack.
    for (const f of fs.readdirSync(packDir)) {
      if (!f.startsWith("tmp_")) continue;
      const st = await Deno.stat(join(packDir, f)).catch(() => null);
      if (st?.mtime && Date.now() - st.mtime.getTime() > 3_600_000) {
        await Deno.remove(join(packDir, f)).catch(() => {});
      }
    }
  });
}

/** Options of the git room store. */
export interface GitRoomStoreOptions {
  /** Packs a room may have before a write merges them into one (default 16). */
  maxPacks?: number;
  /** Loose objects (from older versions, or git) a room may have before a write packs them. */
  maxLoose?: number;
  /** Called after a commit's pack is in place, before the branch moves (tests stop here). */
  beforeBranchMove?: (slug: string) => void | Promise<void>;
}

/**
 * Rooms as bare git repositories under `dir` (`<dir>/<slug>/`). Each commit's new objects
 * are written as one packfile, then the branch moves. Writes within this process are
 * serialised per room; across processes the branch moves under git's `main.lock`, and a
 * write that finds the head moved by another process is built again on the new head.
 */
export function gitRoomStore(
  dir: string,
  clock: () => Date = () => new Date(),
  options: GitRoomStoreOptions = {},
): RoomStore {
  const lock = keyedMutex();
  const maxPacks = options.maxPacks ?? 16;
  const maxLoose = options.maxLoose ?? 256;
  const gitdirOf = (slug: string) => {
    checkSlug(slug);
    return join(dir, slug);
  };

  async function exists(slug: string): Promise<boolean> {
    try {
      await Deno.lstat(join(gitdirOf(slug), "HEAD"));
      return true;
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return false;
      throw e;
    }
  }

  /** Path → blob oid of every file at or under `prefix` in a tree. */
  function treeEntries(
    db: ObjectReader,
    treeOid: string,
    prefix: string | undefined,
    base = "",
    out = new Map<string, string>(),
  ): Map<string, string> {
    for (const e of db.tree(treeOid)) {
      const path = base + e.name;
      if (e.isTree) {
        const dirPath = path + "/";
        const relevant = !prefix || prefix.startsWith(dirPath) || dirPath.startsWith(prefix);
        if (relevant) treeEntries(db, e.oid, prefix, dirPath, out);
      } else if (e.mode !== "160000" && underPrefix(path, prefix)) {
        out.set(path, e.oid);
      }
    }
    return out;
  }

  /**
   * Applies changes (relative to this tree) and returns the new tree's oid, or null if empty.
   * New blobs and trees go to `made`.
   */
  function rewriteTree(
    db: ObjectReader,
    treeOid: string | null,
    changes: Map<string, string | null>,
    made: Map<string, GitObject>,
  ): string | null {
    const entries = new Map<string, TreeItem>();
    if (treeOid) { for (const e of db.tree(treeOid)) entries.set(e.name, e); }
    const sub = new Map<string, Map<string, string | null>>();
    for (const [path, text] of changes) {
      const slash = path.indexOf("/");
      if (slash >= 0) {
        const head = path.slice(0, slash);
        if (!sub.has(head)) sub.set(head, new Map());
        sub.get(head)!.set(path.slice(slash + 1), text);
      } else if (text === null) {
        if (entries.get(path)?.isTree === false) entries.delete(path);
      } else {
        const blob = gitObject("blob", encoder.encode(text));
        made.set(blob.oid, blob);
        entries.set(path, { mode: "100644", name: path, oid: blob.oid, isTree: false });
      }
    }
    for (const [name, subChanges] of sub) {
      const old = entries.get(name);
      const oldTree = old?.isTree ? old.oid : null;
      if (old && !old.isTree) {
        if ([...subChanges.values()].every((t) => t === null)) continue;
        entries.delete(name);
      }
      const oid = rewriteTree(db, oldTree, subChanges, made);
      if (oid) entries.set(name, { mode: "40000", name, oid, isTree: true });
      else entries.delete(name);
    }
    if (entries.size === 0) return null;
    const items = [...entries.values()];
    const tree = gitObject("tree", encodeTree(items));
    made.set(tree.oid, tree);
    if (!treeCache.has(tree.oid)) treeCache.set(tree.oid, items);
    return tree.oid;
  }

  return {
    async createRoom(slug) {
      const gitdir = gitdirOf(slug);
      return await lock(slug, async () => {
        if (await exists(slug)) return false;
        // Build in a temporary sibling, then rename: a half-created room never appears.
        await Deno.mkdir(dir, { recursive: true });
        const tmp = `${gitdir}.tmp-${crypto.randomUUID()}`;
        try {
          await initBare(tmp);
          const tree = gitObject("tree", new Uint8Array());
          const commit = commitObject(tree.oid, [], `Create room ${slug}`, clock());
          const builder = new PackBuilder();
          builder.addObject(tree);
          builder.addObject(commit);
          await installPack(tmp, builder.finish());
          await writeDurable(join(tmp, BRANCH), encoder.encode(`${commit.oid}\n`));
          await Deno.rename(tmp, gitdir);
        } catch (e) {
          await Deno.remove(tmp, { recursive: true }).catch(() => {});
          if (await exists(slug)) return false;
          throw e;
        }
        return true;
      });
    },
    hasRoom: (slug) => exists(slug),
    async listRooms() {
      const out: string[] = [];
      try {
        for await (const e of Deno.readDir(dir)) {
          if (e.isDirectory && SLUG.test(e.name) && await exists(e.name)) out.push(e.name);
        }
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      }
      return out.sort();
    },
    async writeFiles(slug, changes, message) {
      checkChanges(changes);
      const gitdir = gitdirOf(slug);
      return await lock(slug, async () => {
        if (!(await exists(slug))) throw noRoom(slug);
        // First optimistically: the branch is locked only to move it, for milliseconds. When
        // another process moved it meanwhile, again holding the lock throughout, so that
        // busy rooms cannot starve a writer.
        for (let attempt = 0;; attempt++) {
          const held = attempt === 0 ? null : await lockBranch(gitdir);
          const result = await withObjects(gitdir, async (db) => {
            const parent = readHead(gitdir);
            const made = new Map<string, GitObject>();
            const { tree: oldTree } = db.commit(parent);
            let tree = rewriteTree(db, oldTree, changes, made);
            if (tree === null) {
              const empty = gitObject("tree", new Uint8Array());
              made.set(empty.oid, empty);
              tree = empty.oid;
            }
            if (tree === oldTree) return { commit: parent, packs: 0, loose: 0 };
            const commit = commitObject(tree, [parent], message, clock());
            made.set(commit.oid, commit);
            const builder = new PackBuilder();
            for (const object of made.values()) if (!db.has(object.oid)) builder.addObject(object);
            await installPack(gitdir, builder.finish());
            await options.beforeBranchMove?.(slug);
            const branch = held ?? await lockBranch(gitdir);
            if (!(await branch.move(parent, commit.oid))) return null;
            return { commit: commit.oid, packs: db.packs.length + 1, loose: db.looseOids().size };
          }).finally(() => held?.release());
          if (result) {
            if (result.packs > maxPacks || result.loose > maxLoose) {
              // The commit stands whatever happens here; a merge that failed (a full disk)
              // is tried again at the next write.
              await consolidate(gitdir, maxPacks).catch(() => {});
            }
            return result.commit;
          }
          if (attempt >= 3) {
            // Even under the lock: a writer that ignores git's lock (or took ours as stale).
            throw new DvergrError(
              "CONFLICT",
              `Cannot commit to room "${slug}": another process keeps moving its branch`,
              { hint: "Retry when the other writers are done", exit: 1 },
            );
          }
        }
      });
    },
    async readFiles(slug, prefix) {
      const gitdir = gitdirOf(slug);
      if (!(await exists(slug))) throw noRoom(slug);
      const p = prefix ? (prefix.endsWith("/") ? prefix : prefix + "/") : undefined;
      return await withObjects(gitdir, (db) => {
        const entries = [...treeEntries(db, db.commit(readHead(gitdir)).tree, p)].sort((
          [a],
          [b],
        ) => a < b ? -1 : a > b ? 1 : 0);
        const out: FileMap = new Map();
        for (const [path, oid] of entries) out.set(path, textDecoder.decode(db.blob(oid)));
        return out;
      });
    },
    async replaceDir(slug, prefix, files, message) {
      const p = dirPrefix(prefix);
      const gitdir = gitdirOf(slug);
      if (!(await exists(slug))) throw noRoom(slug);
      const oids = await withObjects(
        gitdir,
        (db) => treeEntries(db, db.commit(readHead(gitdir)).tree, p),
      );
      // Compare by blob id: no blob needs to be read to see what changed.
      const changes = dirChanges(
        p,
        files,
        (path) => oids.get(path),
        oids.keys(),
        (text, oid) => gitBlobOid(text) === oid,
      );
      if (changes.size === 0) return null;
      return await this.writeFiles(slug, changes, message);
    },
    async log(slug) {
      const gitdir = gitdirOf(slug);
      if (!(await exists(slug))) throw noRoom(slug);
      return await withObjects(gitdir, (db) => {
        // Newest first, as git log orders by committer time (a room's history is a line).
        const head = readHead(gitdir);
        const out: CommitInfo[] = [];
        const seen = new Set([head]);
        const queue = [{ id: head, commit: db.commit(head) }];
        while (queue.length > 0) {
          let k = 0;
          for (let i = 1; i < queue.length; i++) {
            if (queue[i].commit.time > queue[k].commit.time) k = i;
          }
          const [{ id, commit }] = queue.splice(k, 1);
          out.push({
            id,
            message: commit.message.replace(/\n$/, ""),
            at: new Date(commit.time * 1000).toISOString(),
            parents: [...commit.parents],
          });
          for (const parent of commit.parents) {
            if (seen.has(parent)) continue;
            seen.add(parent);
            queue.push({ id: parent, commit: db.commit(parent) });
          }
        }
        return out;
      });
    },
  };
}

/**
 * Makes `workflows/<name>/` of a room hold exactly `files` (writing what changed, removing
 * what the bundle no longer has) in one commit. Returns the commit id, or null when the
 * room already held exactly these files.
 */
export function syncBundle(
  rooms: RoomStore,
  slug: string,
  name: string,
  files: FileMap,
): Promise<string | null> {
  return rooms.replaceDir(
    slug,
    `workflows/${name}`,
    files,
    `Write bundle ${name} (${files.size} files)`,
  );
}
