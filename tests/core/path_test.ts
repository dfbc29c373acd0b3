/** core/path.ts gives what node:path's POSIX functions give, on paths built from awkward pieces. */
import assert from "node:assert/strict";
import { posix } from "node:path";
import * as path from "../../core/path.ts";
import { relative, resolve } from "../../adapters/files/resolve.ts";

const PIECES = [
  "",
  "/",
  "a",
  "b/",
  "/c",
  ".",
  "..",
  "./d",
  "../e",
  "f//g",
  "h/..",
  "/..",
  "i/./j/",
  "//",
];

/** Every sequence of up to three pieces. */
function* sequences(): Generator<string[]> {
  yield [];
  for (const a of PIECES) {
    yield [a];
    for (const b of PIECES) {
      yield [a, b];
      for (const c of PIECES) yield [a, b, c];
    }
  }
}

Deno.test("join, resolve, normalize, basename, dirname and relative agree with node:path", () => {
  for (const parts of sequences()) {
    const shown = JSON.stringify(parts);
    assert.equal(path.join(...parts), posix.join(...parts), `join ${shown}`);
    assert.equal(
      path.resolveFrom(Deno.cwd(), ...parts),
      posix.resolve(...parts),
      `resolve ${shown}`,
    );
    assert.equal(resolve(...parts), posix.resolve(...parts), `resolve ${shown}`);
    const one = parts.join("");
    assert.equal(path.normalize(one), posix.normalize(one), `normalize ${shown}`);
    assert.equal(path.basename(one), posix.basename(one), `basename ${shown}`);
    assert.equal(path.dirname(one), posix.dirname(one), `dirname ${shown}`);
    assert.equal(path.isAbsolute(one), posix.isAbsolute(one), `isAbsolute ${shown}`);
    if (parts.length === 2) {
      assert.equal(relative(parts[0], parts[1]), posix.relative(parts[0], parts[1]), shown);
      assert.equal(
        path.relativeFrom(Deno.cwd(), parts[0], parts[1]),
        posix.relative(parts[0], parts[1]),
        shown,
      );
    }
  }
  assert.equal(path.sep, posix.sep);
});
