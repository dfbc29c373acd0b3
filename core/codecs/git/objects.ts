/**
 * Git objects as dvergr writes and reads them: object ids (SHA-1 of `<type> <size>\0` and the
 * content), the hex of ids, tree entries in git's order, tree and commit encoding and parsing.
 * Pure: no file is touched. It exists because dvergr writes a room's objects itself (see
 * `pack_write.ts`); what it makes must be what git makes, byte for byte, so that rooms stay
 * real git repositories that `git fsck --strict` accepts.
 */
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { Sha1 } from "../../sha1.ts";

/** Git's object types, and their codes in a pack entry's header. */
export type ObjectType = "commit" | "tree" | "blob" | "tag";
export const TYPE_CODES: Record<ObjectType, number> = { commit: 1, tree: 2, blob: 3, tag: 4 };
export const CODE_TYPES: (ObjectType | undefined)[] = [undefined, "commit", "tree", "blob", "tag"];
/** Pack entry type codes of deltas: base given by its distance back, or by its id. */
export const OFS_DELTA = 6;
export const REF_DELTA = 7;

export interface GitObject {
  oid: string;
  type: ObjectType;
  content: Uint8Array;
}

/** From this size on an object is hashed natively: the native hash's fixed cost is paid back. */
const NATIVE_SHA1_FROM = 1 << 16;

/** The hasher of small objects, reused (objectId() runs to its end before it is used again). */
const sha1 = new Sha1();

/** The git object id of an object: SHA-1 of `<type> <size>\0` and the content. */
export function objectId(type: ObjectType, content: Uint8Array): string {
  const header = `${type} ${content.length}\0`;
  if (content.length >= NATIVE_SHA1_FROM) {
    return createHash("sha1").update(header).update(content).digest("hex");
  }
  const h = sha1.reset();
  for (let i = 0; i < header.length; i++) h.byte(header.charCodeAt(i));
  return h.update(content).hexDigest();
}

/** An object with its id computed. */
export function gitObject(type: ObjectType, content: Uint8Array): GitObject {
  return { oid: objectId(type, content), type, content };
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** The hex of `bytes[start, end)` (faster than Buffer's for object ids). */
export function toHex(bytes: Uint8Array, start: number, end: number): string {
  let out = "";
  for (let i = start; i < end; i++) out += HEX[bytes[i]];
  return out;
}

/** The value of each lower-case hex digit, by character code. */
const NIBBLE = new Uint8Array(128);
for (let i = 0; i < 16; i++) NIBBLE[i.toString(16).charCodeAt(0)] = i;

/**
 * Writes the bytes of a hex object id into `target` at `at`. A table, not a function per digit:
 * a bundle's install writes ~10,000 ids (trees, pack index), most before this is compiled,
 * and a call costs the interpreter more than the rest of the loop.
 */
export function putHex(target: Uint8Array, at: number, hex: string): void {
  for (let i = 0, j = at; i < hex.length; i += 2, j++) {
    target[j] = (NIBBLE[hex.charCodeAt(i)] << 4) | NIBBLE[hex.charCodeAt(i + 1)];
  }
}

export interface TreeItem {
  mode: string;
  name: string;
  oid: string;
  isTree: boolean;
  /** The name's UTF-8 and the id's 20 bytes, kept once known (a rewritten tree reuses them). */
  nameBytes?: Uint8Array;
  oidBytes?: Uint8Array;
}

export interface ParsedCommit {
  tree: string;
  parents: string[];
  /** Committer time, seconds since the epoch. */
  time: number;
  message: string;
}

const decoder = new TextDecoder();

/** UTF-8, shared by the writers of objects. */
export const encoder = new TextEncoder();

/** A tree object's entries, in the tree's order, keeping the names' and ids' bytes. */
export function parseTree(content: Uint8Array): TreeItem[] {
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
export function encodeTree(items: TreeItem[]): Uint8Array {
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
export function compareNames(a: Uint8Array, aTree: boolean, b: Uint8Array, bTree: boolean): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  const nextA = a.length > n ? a[n] : aTree ? 0x2f : 0;
  const nextB = b.length > n ? b[n] : bTree ? 0x2f : 0;
  return nextA - nextB;
}

/** A commit's tree, parents, committer time and message (headers it does not use are skipped). */
export function parseCommit(content: Uint8Array): ParsedCommit {
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
export function normalizeMessage(message: string): string {
  return message.replace(/\r/g, "").replace(/^\n+/, "").replace(/\n+$/, "") + "\n";
}

const AUTHOR = "dvergr <dvergr@localhost>";

/** A commit by dvergr (author and committer `dvergr <dvergr@localhost>`, UTC) of `tree`. */
export function commitObject(
  tree: string,
  parents: string[],
  message: string,
  when: Date,
): GitObject {
  const who = `${AUTHOR} ${Math.floor(when.getTime() / 1000)} +0000`;
  const text = `tree ${tree}\n${parents.map((p) => `parent ${p}\n`).join("")}` +
    `author ${who}\ncommitter ${who}\n\n${normalizeMessage(message)}`;
  return gitObject("commit", encoder.encode(text));
}
