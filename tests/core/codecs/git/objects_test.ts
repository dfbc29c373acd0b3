import assert from "node:assert/strict";
import {
  commitObject,
  compareNames,
  encodeTree,
  gitObject,
  normalizeMessage,
  objectId,
  parseCommit,
  parseTree,
  putHex,
  toHex,
  type TreeItem,
} from "../../../../core/codecs/git/objects.ts";

const utf8 = (s: string) => new TextEncoder().encode(s);

/** Runs git with `input` on stdin in a fresh repository and returns its trimmed stdout. */
async function git(args: string[], input: string): Promise<string> {
  const dir = await Deno.makeTempDir();
  try {
    const init = new Deno.Command("git", { args: ["init", "-q", "--bare", dir] }).outputSync();
    assert.ok(init.success, new TextDecoder().decode(init.stderr));
    const child = new Deno.Command("git", {
      args: ["-C", dir, ...args],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const writer = child.stdin.getWriter();
    await writer.write(utf8(input));
    await writer.close();
    const out = await child.output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    return new TextDecoder().decode(out.stdout).trim();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test('objectId() gives git\'s ids of the empty tree and of the blob "hello\\n"', () => {
  assert.equal(objectId("tree", new Uint8Array()), "4b825dc642cb6eb9a060e54bf8d69288fbee4904");
  assert.equal(objectId("blob", utf8("hello\n")), "ce013625030ba8dba906f756967f9e9ca394464a");
  assert.equal(gitObject("blob", utf8("hello\n")).oid, "ce013625030ba8dba906f756967f9e9ca394464a");
});

Deno.test("objectId() of a blob agrees with git hash-object on non-ASCII text and a BOM", async () => {
  const text = "\ufeffünïcödé ✓\r\nline two\n";
  assert.equal(objectId("blob", utf8(text)), await git(["hash-object", "--stdin"], text));
});

Deno.test("toHex() and putHex() convert object ids to and from their 20 bytes", () => {
  const oid = "00ff10a9ce013625030ba8dba906f756967f9e9c";
  const bytes = new Uint8Array(24);
  putHex(bytes, 2, oid);
  assert.deepEqual([...bytes.subarray(0, 6)], [0, 0, 0x00, 0xff, 0x10, 0xa9]);
  assert.equal(toHex(bytes, 2, 22), oid);
});

Deno.test("putHex() reads every byte value's two digits (its table of digits is whole)", () => {
  for (let b = 0; b < 256; b += 10) {
    const values = Array.from({ length: 20 }, (_, i) => (b + i) % 256);
    const hex = values.map((v) => v.toString(16).padStart(2, "0")).join("");
    const bytes = new Uint8Array(21);
    putHex(bytes, 1, hex);
    assert.deepEqual([...bytes.subarray(1)], values, hex);
  }
});

Deno.test("compareNames() orders a tree's name as if it ended with a slash, as git does", () => {
  const cmp = (a: string, aTree: boolean, b: string, bTree: boolean) =>
    Math.sign(compareNames(utf8(a), aTree, utf8(b), bTree));
  assert.equal(cmp("a.txt", false, "a", true), -1); // "." < "/"
  assert.equal(cmp("a", true, "a0", false), -1); // "/" < "0"
  assert.equal(cmp("a", false, "a.txt", false), -1); // a prefix first
  assert.equal(cmp("é", false, "z", false), 1); // bytes, not UTF-16 units
  assert.equal(cmp("same", false, "same", false), 0);
});

Deno.test("encodeTree() sorts entries in git's order and makes the tree git mktree makes", async () => {
  const blob = objectId("blob", utf8("x"));
  const sub = objectId("tree", new Uint8Array());
  const items: TreeItem[] = [
    { mode: "100644", name: "é.txt", oid: blob, isTree: false },
    { mode: "40000", name: "a", oid: sub, isTree: true },
    { mode: "100644", name: "a.txt", oid: blob, isTree: false },
    { mode: "100644", name: "a0", oid: blob, isTree: false },
  ];
  const content = encodeTree(items);
  assert.deepEqual(items.map((e) => e.name), ["a.txt", "a", "a0", "é.txt"]);
  const listing = items.map((e) =>
    `${e.mode.padStart(6, "0")} ${e.isTree ? "tree" : "blob"} ${e.oid}\t${e.name}\n`
  ).join("");
  assert.equal(objectId("tree", content), await git(["mktree", "--missing"], listing));
});

Deno.test("parseTree() reads back what encodeTree() wrote: modes, names, ids and kinds", () => {
  const items: TreeItem[] = [
    { mode: "100644", name: "b c.txt", oid: objectId("blob", utf8("1")), isTree: false },
    { mode: "40000", name: "dir", oid: objectId("tree", new Uint8Array()), isTree: true },
    { mode: "100644", name: "ünï", oid: objectId("blob", utf8("2")), isTree: false },
  ];
  const content = encodeTree(items.map((e) => ({ ...e })));
  const parsed = parseTree(content);
  assert.deepEqual(
    parsed.map(({ mode, name, oid, isTree }) => ({ mode, name, oid, isTree })),
    items,
  );
  // Entries keep their bytes: encoding the parsed entries again gives the same tree.
  assert.deepEqual(encodeTree(parsed), content);
});

Deno.test("parseCommit() reads back commitObject()'s tree, parents, time and normalised message", () => {
  const tree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
  const parents = ["ce013625030ba8dba906f756967f9e9ca394464a", "1".repeat(40)];
  const when = new Date("2026-01-02T03:04:05.678Z");
  const commit = commitObject(tree, parents, "\n\nsubject\r\n\nbody\n\n", when);
  assert.equal(commit.type, "commit");
  assert.equal(commit.oid, objectId("commit", commit.content));
  const parsed = parseCommit(commit.content);
  assert.deepEqual(parsed, {
    tree,
    parents,
    time: Math.floor(when.getTime() / 1000),
    message: "subject\n\nbody\n",
  });
  assert.match(
    new TextDecoder().decode(commit.content),
    /^author dvergr <dvergr@localhost> \d+ \+0000$/m,
  );
});

Deno.test("normalizeMessage() stores a message as git does: no CR, no leading blank lines, one final newline", () => {
  assert.equal(normalizeMessage("\n\na\r\nb\n\n\n"), "a\nb\n");
  assert.equal(normalizeMessage("one"), "one\n");
});
