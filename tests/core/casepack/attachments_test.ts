import assert from "node:assert/strict";
import { attachmentPath, collectAttachments } from "../../../core/casepack/attachments.ts";

Deno.test("attachmentPath() keeps references at or below the table's directory, nothing else", () => {
  const cases: [string, string, string | null][] = [
    ["/data", "a.txt", "a.txt"],
    ["/data", "sub/b.txt", "sub/b.txt"],
    ["/data", "sub/../a.txt", "a.txt"],
    ["/data", "/data/a.txt", "a.txt"],
    ["/data", "../outside.txt", null],
    ["/data", "/outside.txt", null],
    ["/data", "/database/x.txt", null],
    ["/data", ".", null],
    ["/data", "a\\b.txt", null],
    ["/", "a.txt", "a.txt"],
    ["/", "/a.txt", "a.txt"],
    ["/", "../a.txt", null],
  ];
  for (const [dir, ref, want] of cases) {
    assert.equal(attachmentPath(dir, ref), want, `${dir} ${ref}`);
  }
});

Deno.test("collectAttachments() asks the source only for paths the rule lets through", async () => {
  const asked: string[] = [];
  const files = new Map([["a.txt", "A"], ["sub/b.txt", "B"]]);
  const got = await collectAttachments(
    "/t",
    ["a.txt", "../x.txt", "sub/b.txt", "gone.txt"],
    (rel) => {
      asked.push(rel);
      return Promise.resolve(files.get(rel) ?? null);
    },
  );
  assert.deepEqual(Object.fromEntries(got), { "a.txt": "A", "sub/b.txt": "B" });
  assert.deepEqual(asked.sort(), ["a.txt", "gone.txt", "sub/b.txt"]);
});
