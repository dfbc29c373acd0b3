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

/** `changes` as the rewrite walks them: paths and texts by index, new objects to `made`. */
function changesOf(
  changes: Map<string, string | null>,
  made: Map<string, GitObject>,
  slug: string,
): Changes {
  return { paths: [...changes.keys()], texts: [...changes.values()], all: changes, made, slug };
}

/**
 * The oid of a new tree holding the files `changes` writes (none removed: there is nothing to
 * remove), as changedTree() on an empty tree; an empty tree when there are none. New blobs and
 * trees go to `made`.
 */
export function newTree(
  changes: Map<string, string | null>,
  made: Map<string, GitObject>,
  slug: string,
): string {
  const c = changesOf(changes, made, slug);
  const tree = freshTree(c, c.paths.map((_, i) => i), 0);
  if (tree !== null) return tree.oid;
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
  const c = changesOf(changes, made, slug);
  return rewriteLevel(db, c, treeOid, c.paths.map((_, i) => i), 0)?.oid ?? null;
}

/** A change set as two arrays (paths, texts): a level passes the indices of its changes. */
interface Changes {
  paths: string[];
  texts: (string | null)[];
  all: Map<string, string | null>;
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
): GitObject | null {
  if (!treeOid) return freshTree(c, items, from);
  const { paths, texts, made, slug } = c;
  const entries = new Map<string, TreeItem>();
  for (const e of db.tree(treeOid)) entries.set(e.name, e);
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
    const tree = rewriteLevel(db, c, old?.oid ?? null, group, from + name.length + 1);
    if (tree) entries.set(name, dirItem(name, tree));
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
    entries.set(name, blobItem(made, name, texts[i]!));
  }
  if (entries.size === 0) return null;
  return treeOf(made, [...entries.values()]);
}

/**
 * The tree at depth `from` of `items` when nothing is there yet (a bundle installed in a
 * fresh room): one pass over the written paths in order with a stack of the directories
 * open, each closed into its tree when the paths leave it (the paths under a directory are
 * contiguous in any lexicographic order), instead of two Maps and a recursion per directory
 * (a 1,000-case bundle is ~3,000 new directories). encodeTree() puts each tree's entries in
 * git's order. Deletions have nothing to delete.
 */
function freshTree(c: Changes, items: number[], from: number): GitObject | null {
  const { paths, texts, made } = c;
  // Sorted as strings by the engine, then each text found again by its path: a comparator
  // over indices is called ~20,000 times for 2,000 paths, mostly before it is compiled.
  const order = items.filter((i) => texts[i] !== null).map((i) => paths[i]).sort();
  if (order.length === 0) return null;
  const open: FreshDir[] = [{ name: "", start: from, prefix: "", entries: [] }];
  for (const path of order) {
    while (open.length > 1 && !path.startsWith(open[open.length - 1].prefix)) closeDir(made, open);
    let start = open[open.length - 1].start;
    for (let slash = path.indexOf("/", start); slash >= 0; slash = path.indexOf("/", start)) {
      const name = path.slice(start, slash);
      if (hasFile(open[open.length - 1].entries, name)) {
        throw conflictError(c.slug, { file: path.slice(0, slash), inside: path });
      }
      start = slash + 1;
      open.push({ name, start, prefix: path.slice(0, start), entries: [] });
    }
    open[open.length - 1].entries.push(blobItem(made, path.slice(start), c.all.get(path)!));
  }
  while (open.length > 1) closeDir(made, open);
  return treeOf(made, open[0].entries);
}

/** A directory being built by freshTree(): its name, its path, where its entries' names start. */
interface FreshDir {
  name: string;
  start: number;
  prefix: string;
  entries: TreeItem[];
}

/** Makes the innermost open directory a tree, an entry of its parent. */
function closeDir(made: Map<string, GitObject>, open: FreshDir[]): void {
  const dir = open.pop()!;
  open[open.length - 1].entries.push(dirItem(dir.name, treeOf(made, dir.entries)));
}

/**
 * Whether a directory's entries so far hold a file `name`: it would come just before the
 * names that extend `name` (only those sort between it and `name/`), at the end.
 */
function hasFile(entries: TreeItem[], name: string): boolean {
  for (let k = entries.length - 1; k >= 0 && entries[k].name.startsWith(name); k--) {
    if (entries[k].name === name) return !entries[k].isTree;
  }
  return false;
}

/** A new blob of `text` (in `made`) as the tree entry `name`. */
function blobItem(made: Map<string, GitObject>, name: string, text: string): TreeItem {
  const blob = gitObject("blob", encoder.encode(text));
  made.set(blob.oid, blob);
  return { mode: "100644", name, oid: blob.oid, isTree: false };
}

/** The tree entry `name` of a new tree. */
function dirItem(name: string, tree: GitObject): TreeItem {
  return { mode: "40000", name, oid: tree.oid, isTree: true };
}

/** A new tree of `list` (in `made`, and in the tree cache). */
function treeOf(made: Map<string, GitObject>, list: TreeItem[]): GitObject {
  const tree = gitObject("tree", encodeTree(list));
  made.set(tree.oid, tree);
  if (!treeCache.has(tree.oid)) treeCache.set(tree.oid, list);
  return tree;
}
