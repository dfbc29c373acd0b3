/**
 * A room's repository around its objects: an empty bare repository as `git init --bare`
 * leaves it, the branch's head (a loose ref, else `packed-refs`), and the branch lock taken
 * as git takes it (`refs/heads/main.lock`, created exclusively) with a compare-and-swap move,
 * so that dvergr processes and git itself never lose each other's commits.
 *
 * Permissions: --allow-read and --allow-write on the room's directory.
 */
import * as fs from "node:fs";
import { join } from "node:path";
import { DvergrError } from "../../../core/errors.ts";
import { encoder } from "../../../core/codecs/git/objects.ts";
import { damaged, hasCode } from "../../../core/codecs/git/damaged.ts";
import { storageProblem } from "../../files/os_error.ts";

/** A room's only branch. */
export const BRANCH = "refs/heads/main";

/** The commit the branch points at (a loose ref, else `packed-refs`, as git packs them). */
export function readHead(gitdir: string): string {
  try {
    const oid = fs.readFileSync(join(gitdir, BRANCH), "utf8").trim();
    if (/^[0-9a-f]{40}$/.test(oid)) return oid;
    throw damaged(gitdir, `${BRANCH} holds "${oid.slice(0, 60)}", not a commit id`);
  } catch (e) {
    if (!hasCode(e, "ENOENT")) throw e;
  }
  try {
    for (const line of fs.readFileSync(join(gitdir, "packed-refs"), "utf8").split("\n")) {
      if (line.endsWith(` ${BRANCH}`)) return line.slice(0, 40);
    }
  } catch (e) {
    if (!hasCode(e, "ENOENT")) throw e;
  }
  throw damaged(gitdir, `the branch ${BRANCH} is missing`);
}

/** A branch lock not touched for this long was left by a process that died holding it. */
const STALE_LOCK_MS = 10_000;
/** A holder touches its lock this often (a long write is not taken for a dead one). */
const LOCK_HEARTBEAT_MS = 2_000;
/** How long a writer waits for a live lock before giving up. */
const LOCK_WAIT_MS = 120_000;

/** The branch, locked as git locks it: `refs/heads/main.lock`, created exclusively. */
export interface BranchLock {
  /**
   * Moves the branch from `from` to `to` (the lock file, written and synced, renamed over the
   * ref) and releases the lock; false, the branch unmoved, when it no longer points at `from`.
   */
  move(from: string, to: string): Promise<boolean>;
  /** Releases the lock without moving the branch (nothing when it moved). */
  release(): Promise<void>;
}

/**
 * Takes the branch lock of a repository (git itself honours it too). A lock left by a dead
 * process is taken over once stale; a live one is waited for.
 */
export async function lockBranch(gitdir: string): Promise<BranchLock> {
  const ref = join(gitdir, BRANCH);
  const lockPath = `${ref}.lock`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  let file: Deno.FsFile | null = null;
  let madeDir = false;
  while (!file) {
    try {
      file = await Deno.open(lockPath, { write: true, createNew: true });
    } catch (e) {
      if (e instanceof Deno.errors.NotFound && !madeDir) {
        // `git pack-refs` may leave refs/heads empty, and something may remove it then.
        await Deno.mkdir(join(gitdir, "refs", "heads"), { recursive: true });
        madeDir = true;
        continue;
      }
      if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
      const mtime = await Deno.stat(lockPath).then((s) => s.mtime?.getTime() ?? 0, () => null);
      if (mtime !== null && Date.now() - mtime > STALE_LOCK_MS) {
        await Deno.remove(lockPath).catch(() => {});
      } else if (Date.now() > deadline) {
        const slug = gitdir.split(/[\\/]/).pop();
        throw new DvergrError(
          "CONFLICT",
          `Cannot commit to room "${slug}": its branch stays locked by another process ("${lockPath}")`,
          { hint: "Retry when the other writer is done", result: true },
        );
      } else {
        await new Promise((r) => setTimeout(r, 5 + Math.random() * 20));
      }
    }
  }
  const held = file;
  let closed = false, finished = false;
  const heartbeat = setInterval(() => {
    const now = new Date();
    Deno.utime(lockPath, now, now).catch(() => {});
  }, LOCK_HEARTBEAT_MS);
  const close = () => {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    held.close();
  };
  const release = async () => {
    if (finished) return;
    finished = true;
    close();
    await Deno.remove(lockPath).catch(() => {});
  };
  return {
    async move(from, to) {
      if (finished) throw new Error("BranchLock.move() after the lock was released");
      try {
        if (readHead(gitdir) !== from) return false;
        try {
          await held.write(encoder.encode(`${to}\n`));
          await held.syncData();
        } catch (e) {
          throw storageProblem(e, `"${lockPath}"`);
        }
        close();
        await Deno.rename(lockPath, ref);
        finished = true;
        return true;
      } finally {
        await release();
      }
    },
    release,
  };
}

/** Makes an empty bare repository (what `git init --bare` leaves, on branch main). */
export async function initBare(gitdir: string): Promise<void> {
  for (const sub of ["objects/pack", "objects/info", "refs/heads", "refs/tags"]) {
    await Deno.mkdir(join(gitdir, sub), { recursive: true });
  }
  await Deno.writeTextFile(join(gitdir, "HEAD"), `ref: ${BRANCH}\n`);
  await Deno.writeTextFile(
    join(gitdir, "config"),
    "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n",
  );
}
