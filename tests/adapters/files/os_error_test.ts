import assert from "node:assert/strict";
import { isStorageError, osProblem, storageProblem } from "../../../adapters/files/os_error.ts";
import { DvergrError } from "../../../core/errors.ts";

Deno.test("isStorageError() knows a full, read-only or size-limited file system in Deno's, node's and SQLite's words", () => {
  for (
    const e of [
      new Error("No space left on device (os error 28): writefile '/h/blobs/ab/x'"),
      new Error("File too large (os error 27)"),
      new Error("Read-only file system (os error 30): mkdir '/h/worlds/p1'"),
      new Error("Disk quota exceeded (os error 122)"),
      new Error("Input/output error (os error 5)"),
      Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" }),
      new TypeError("database or disk is full"),
      new TypeError("disk I/O error"),
      new Error("attempt to write a readonly database"),
    ]
  ) assert.ok(isStorageError(e), e.message);
  for (
    const e of [
      new Error("No such file or directory (os error 2): open '/x'"),
      new Deno.errors.PermissionDenied("Permission denied (os error 13)"),
      new TypeError("Total mutation size too large"),
      new TypeError("database is locked"),
      new DvergrError("IO", "Cannot complete the command: x"),
      "No space left on device (os error 28)",
    ]
  ) assert.ok(!isStorageError(e), String(e));
});

Deno.test("storageProblem() names the file SQLite's words leave out; the error stays a storage error", () => {
  const e = storageProblem(
    new TypeError("database or disk is full"),
    `the home's records "/h/state.kv"`,
  );
  assert.ok(e instanceof DvergrError);
  assert.equal(e.code, "IO");
  assert.equal(
    e.message,
    `Cannot write the home's records "/h/state.kv": database or disk is full`,
  );
  assert.ok(isStorageError(e));
  // What the osProblem() boundary does to it: nothing more.
  assert.equal(osProblem(e), null);
  const named = storageProblem(new Error("No space left on device (os error 28)"), `"/h/p.pack"`);
  assert.equal(osProblem(named), null);
  assert.match((named as Error).message, /^Cannot write "\/h\/p.pack": No space left on device/);
  // Not an error of the environment: passed on as it is.
  const bug = new TypeError("x is undefined");
  assert.equal(storageProblem(bug, "anything"), bug);
});
