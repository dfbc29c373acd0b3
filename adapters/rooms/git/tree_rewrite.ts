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
 * refused (`at` is the tree's path, for the message), never resolved by dropping one of
 * the two.
 */
function rewriteTree(
  db: ObjectReader,
  treeOid: string | null,
  changes: Map<string, string | null>,
  made: Map<string, GitObject>,
  slug: string,
  at = "",
): string | null {
  const entries = new Map<string, TreeItem>();
  if (treeOid) { for (const e of db.tree(treeOid)) entries.set(e.name, e); }
  const sub = new Map<string, Map<string, string | null>>();
  const blobs = new Map<string, string>();
  for (const [path, text] of changes) {
    const slash = path.indexOf("/");
    if (slash >= 0) {
      const head = path.slice(0, slash);
      if (!sub.has(head)) sub.set(head, new Map());
      sub.get(head)!.set(path.slice(slash + 1), text);
    } else if (text === null) {
      if (entries.get(path)?.isTree === false) entries.delete(path);
    } else blobs.set(path, text);
  }
  for (const [name, subChanges] of sub) {
    const old = entries.get(name);
    if (old && !old.isTree) {
      if ([...subChanges.values()].every((t) => t === null)) continue;
      const inside = [...subChanges].find(([, t]) => t !== null)![0];
      throw conflictError(slug, { file: at + name, inside: `${at}${name}/${inside}` });
    }
    const oid = rewriteTree(db, old?.oid ?? null, subChanges, made, slug, `${at}${name}/`);
    if (oid) entries.set(name, { mode: "40000", name, oid, isTree: true });
    else entries.delete(name);
  }
  for (const [path, text] of blobs) {
    if (entries.get(path)?.isTree) {
      throw new DvergrError(
        "PATH_INVALID",
        `Cannot write "${at}${path}" to room "${slug}": it is a directory of the room, and ` +
          "writing a file there would lose the files in it",
        { hint: "Remove the directory's files first (null for each), or use another path" },
      );
    }
    const blob = gitObject("blob", encoder.encode(text));
    made.set(blob.oid, blob);
    entries.set(path, { mode: "100644", name: path, oid: blob.oid, isTree: false });
  }
  if (entries.size === 0) return null;
  const items = [...entries.values()];
  const tree = gitObject("tree", encodeTree(items));
  made.set(tree.oid, tree);
  if (!treeCache.has(tree.oid)) treeCache.set(tree.oid, items);
  return tree.oid;
}
