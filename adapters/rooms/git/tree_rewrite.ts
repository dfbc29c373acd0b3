/**
 * The trees of a git room: the files under a prefix of a tree, and a tree with changes
 * applied, built in memory from the old one (new blobs and trees are collected for one pack).
 */
import { DvergrError } from "../../../core/errors.ts";
import {
  encoder,
  encodeTree,
  type GitObject,
  gitObject,
  type TreeItem,
} from "../../../core/codecs/git/objects.ts";
import { type ObjectReader, treeCache } from "./object_reader.ts";
import { conflictError, underPrefix } from "../room_rules.ts";

/** Path → blob oid of every file at or under `prefix` in a tree. */
export function treeEntries(
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
 * The oid of tree `treeOid` with `changes` applied; an empty tree when nothing is left. New
 * blobs and trees go to `made`.
 */
export function changedTree(
  db: ObjectReader,
  treeOid: string | null,
  changes: Map<string, string | null>,
  made: Map<string, GitObject>,
  slug: string,
): string {
  const tree = rewriteTree(db, treeOid, changes, made, slug);
  if (tree !== null) return tree;
  const empty = gitObject("tree", new Uint8Array());
  made.set(empty.oid, empty);
  return empty.oid;
}

/**
 * The tree `treeOid` with `changes` (paths relative to it) applied, or null if empty.
 * Deletions go first, so a file may be replaced by a directory (or back) in one change set;
 * otherwise a write that would turn a file into a directory or a directory into a file is
 * refused, never resolved by dropping one of the two.
 */
function rewriteTree(
  db: ObjectReader,
  treeOid: string | null,
  changes: Map<string, string | null>,
  made: Map<string, GitObject>,
  slug: string,
): string | null {
  const c: Changes = { paths: [...changes.keys()], texts: [...changes.values()], made, slug };
  return rewriteLevel(db, c, treeOid, c.paths.map((_, i) => i), 0);
}

/** A change set as two arrays (paths, texts): a level passes the indices of its changes. */
interface Changes {
  paths: string[];
  texts: (string | null)[];
  made: Map<string, GitObject>;
  slug: string;
}

/**
 * The tree `treeOid` at depth `from` (the length of its path, "/" included) with the changes
 * `items` applied, whose paths all start with that path: each path is split where it is read,
 * not cut into a new string at every level (a 1,000-case bundle is 2,000 paths seven deep).
 */
function rewriteLevel(
  db: ObjectReader,
  c: Changes,
  treeOid: string | null,
  items: number[],
  from: number,
): string | null {
  const { paths, texts, made, slug } = c;
  const entries = new Map<string, TreeItem>();
  if (treeOid) { for (const e of db.tree(treeOid)) entries.set(e.name, e); }
  const sub = new Map<string, number[]>();
  const blobs: number[] = [];
  for (const i of items) {
    const path = paths[i];
    const slash = path.indexOf("/", from);
    if (slash >= 0) {
      const head = path.slice(from, slash);
      const group = sub.get(head);
      if (group) group.push(i);
      else sub.set(head, [i]);
    } else if (texts[i] === null) {
      const name = path.slice(from);
      if (entries.get(name)?.isTree === false) entries.delete(name);
    } else blobs.push(i);
  }
  for (const [name, group] of sub) {
    const old = entries.get(name);
    if (old && !old.isTree) {
      const inside = group.find((i) => texts[i] !== null);
      if (inside === undefined) continue;
      const file = paths[inside].slice(0, from + name.length);
      throw conflictError(slug, { file, inside: paths[inside] });
    }
    const oid = rewriteLevel(db, c, old?.oid ?? null, group, from + name.length + 1);
    if (oid) entries.set(name, { mode: "40000", name, oid, isTree: true });
    else entries.delete(name);
  }
  for (const i of blobs) {
    const name = paths[i].slice(from);
    if (entries.get(name)?.isTree) {
      throw new DvergrError(
        "PATH_INVALID",
        `Cannot write "${paths[i]}" to room "${slug}": it is a directory of the room, and ` +
          "writing a file there would lose the files in it",
        { hint: "Remove the directory's files first (null for each), or use another path" },
      );
    }
    const blob = gitObject("blob", encoder.encode(texts[i]!));
    made.set(blob.oid, blob);
    entries.set(name, { mode: "100644", name, oid: blob.oid, isTree: false });
  }
  if (entries.size === 0) return null;
  const list = [...entries.values()];
  const tree = gitObject("tree", encodeTree(list));
  made.set(tree.oid, tree);
  if (!treeCache.has(tree.oid)) treeCache.set(tree.oid, list);
  return tree.oid;
}
