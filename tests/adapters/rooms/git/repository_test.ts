import assert from "node:assert/strict";
import { join } from "node:path";
import { DvergrError } from "../../../../core/errors.ts";
import {
  BRANCH,
  initBare,
  lockBranch,
  readHead,
} from "../../../../adapters/rooms/git/repository.ts";

const A = "a".repeat(40), B = "b".repeat(40), C = "c".repeat(40);

async function withRepo(f: (gitdir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    await initBare(join(dir, "room"));
    await f(join(dir, "room"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("readHead() reads the loose ref, else packed-refs, else names the missing branch", async () => {
  await withRepo(async (gitdir) => {
    assert.throws(
      () => readHead(gitdir),
      (e) => e instanceof DvergrError && e.code === "ROOM_INVALID" && /is missing/.test(e.message),
    );
    await Deno.writeTextFile(
      join(gitdir, "packed-refs"),
      `# pack-refs with: peeled\n${B} ${BRANCH}\n`,
    );
    assert.equal(readHead(gitdir), B);
    await Deno.writeTextFile(join(gitdir, BRANCH), `${A}\n`);
    assert.equal(readHead(gitdir), A);
  });
});

Deno.test("lockBranch() moves the branch only from the head it expects, then releases the lock", async () => {
  await withRepo(async (gitdir) => {
    await Deno.writeTextFile(join(gitdir, BRANCH), `${A}\n`);
    const lockPath = join(gitdir, `${BRANCH}.lock`);
    const stale = await lockBranch(gitdir);
    assert.ok((await Deno.stat(lockPath)).isFile);
    assert.equal(await stale.move(B, C), false);
    assert.equal(readHead(gitdir), A);
    await assert.rejects(Deno.stat(lockPath), Deno.errors.NotFound);
    const fresh = await lockBranch(gitdir);
    assert.equal(await fresh.move(A, C), true);
    assert.equal(readHead(gitdir), C);
    await assert.rejects(Deno.stat(lockPath), Deno.errors.NotFound);
  });
});

Deno.test("initBare() makes a repository git reads as an empty bare one on main", async () => {
  await withRepo(async (gitdir) => {
    const git = async (...args: string[]) => {
      const out = await new Deno.Command("git", { args: ["-C", gitdir, ...args] }).output();
      assert.ok(out.success, new TextDecoder().decode(out.stderr));
      return new TextDecoder().decode(out.stdout).trim();
    };
    assert.equal(await git("rev-parse", "--is-bare-repository"), "true");
    assert.equal(await git("symbolic-ref", "HEAD"), BRANCH);
  });
});
