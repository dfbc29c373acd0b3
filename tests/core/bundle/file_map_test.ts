import assert from "node:assert/strict";
import {
  fileDirConflict,
  gitAliasProblem,
  relativePathProblem,
} from "../../../core/bundle/file_map.ts";

Deno.test("gitAliasProblem() refuses every segment git or a file system takes for .git", () => {
  for (
    const seg of [
      ".git",
      ".GIT",
      ".Git",
      ".git.",
      ".git..",
      ".git ",
      ".git . ",
      "git~1",
      "GIT~1",
      "git~2",
      ".git::$INDEX_ALLOCATION",
      ".git:stream",
      ".g\u200cit",
      "\ufeff.git",
      // Led by a code point HFS+ ignores, or a capital: past the check of the first character.
      "\u200cgit~1",
      "\u202a.GIT",
      "Git~3",
    ]
  ) {
    assert.notEqual(gitAliasProblem(seg), null, JSON.stringify(seg));
    assert.notEqual(relativePathProblem(`a/${seg}/b`), null, JSON.stringify(seg));
  }
  for (const seg of [".gitignore", ".gitattributes", "git", "x.git", ".github", "git~", "git~a"]) {
    assert.equal(gitAliasProblem(seg), null, seg);
  }
});

Deno.test("fileDirConflict() finds a path that is a file and a directory", () => {
  assert.deepEqual(fileDirConflict(["fixtures/docs", "fixtures/docs/more.md"]), {
    file: "fixtures/docs",
    inside: "fixtures/docs/more.md",
  });
  assert.deepEqual(fileDirConflict(["c/x/y/z", "a", "c/x"]), { file: "c/x", inside: "c/x/y/z" });
  assert.equal(fileDirConflict(["a/b", "a/c", "ab", "a.b/c"]), null);
  assert.equal(fileDirConflict([]), null);
});
