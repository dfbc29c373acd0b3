/** tree_rewrite.ts: a new directory's trees (built in one pass) are those a rewrite makes. */
import assert from "node:assert/strict";
import { type GitObject, parseTree } from "../../../../core/codecs/git/objects.ts";
import { changedTree } from "../../../../adapters/rooms/git/tree_rewrite.ts";
import type { ObjectReader } from "../../../../adapters/rooms/git/object_reader.ts";

/** An object reader over the objects made so far (only trees are read by changedTree). */
function readerOf(made: Map<string, GitObject>): ObjectReader {
  return { tree: (oid: string) => parseTree(made.get(oid)!.content) } as unknown as ObjectReader;
}

/**
 * Names whose order differs between JavaScript strings, git's bytes and git's "name/" rule,
 * given out of order (a directory's files apart).
 */
const FILES: [string, string][] = [
  ["w/b/c/f", "9"],
  ["w/a/x", "1"],
  ["w/a-b", "2"],
  ["w/a0", "3"],
  ["w/a.b/y", "4"],
  ["w/\uE000", "5"],
  ["w/\u{1F600}/z", "6"],
  ["w/ä", "7"],
  ["w/b/c/d/e", "8"],
  ["w/B", "10"],
  ["top", "11"],
];
const DIRS = ["w", "w/a", "w/a.b", "w/\u{1F600}", "w/b", "w/b/c", "w/b/c/d"];

Deno.test("changedTree() builds new directories' trees as a rewrite of existing ones does", () => {
  const made = new Map<string, GitObject>();
  const db = readerOf(made);
  // All at once: every directory is new (and a deletion there has nothing to delete).
  const fresh = changedTree(db, null, new Map([...FILES, ["w/gone", null]]), made, "r");
  // The same files written over existing directories (each holding a placeholder, removed).
  const placeholders = new Map<string, string | null>(DIRS.map((d) => [`${d}/p`, "p"]));
  const before = changedTree(db, null, placeholders, made, "r");
  const over = new Map<string, string | null>(FILES);
  for (const p of placeholders.keys()) over.set(p, null);
  assert.equal(changedTree(db, before, over, made, "r"), fresh);
  // Every tree made holds its entries once, in git's byte order (a tree's name + "/").
  const key = (
    e: { name: string; isTree: boolean },
  ) => [...new TextEncoder().encode(e.name + (e.isTree ? "/" : ""))];
  for (const o of made.values()) {
    if (o.type !== "tree") continue;
    const keys = parseTree(o.content).map(key);
    for (let i = 1; i < keys.length; i++) {
      const [a, b] = [keys[i - 1], keys[i]];
      let k = 0;
      while (k < a.length && k < b.length && a[k] === b[k]) k++;
      assert.ok(k < b.length && (k === a.length || a[k] < b[k]), `${o.oid} out of order`);
    }
  }
  const top = parseTree(made.get(fresh)!.content).map((e) => e.name);
  assert.deepEqual(top, ["top", "w"]);
});

Deno.test("changedTree() refuses a file that is also a directory in a new directory", () => {
  const made = new Map<string, GitObject>();
  const changes = new Map([["n/a", "1"], ["n/a.txt", "2"], ["n/a/b", "3"]]);
  assert.throws(
    () => changedTree(readerOf(made), null, changes, made, "r"),
    (e: Error & { code?: string }) =>
      e.code === "PATH_INVALID" && /"n\/a" is a file/.test(e.message),
  );
});

Deno.test("changedTree() of only deletions in a directory that does not exist changes nothing", () => {
  const made = new Map<string, GitObject>();
  const db = readerOf(made);
  const before = changedTree(db, null, new Map([["k", "1"]]), made, "r");
  assert.equal(
    changedTree(db, before, new Map([["n/x", null], ["n/y/z", null]]), made, "r"),
    before,
  );
});
