/**
 * Branches of a git room beside its head: commits on any commit of the room (a run's fork,
 * a merge), `refs/heads/<branch>` made once, and the head moved from a known commit to one
 * of them in a single compare-and-swap under git's branch lock.
 *
 * Permissions: --allow-read and --allow-write on the rooms directory.
 */
import { join } from "node:path";
import { DvergrError } from "../../../core/errors.ts";
import { type BranchCommit, branchNameProblem } from "../../../core/ports/room_store.ts";
import { commitObject, encoder, type GitObject } from "../../../core/codecs/git/objects.ts";
import { installPack, PackBuilder, writeDurable } from "./pack_write.ts";
import { withObjects } from "./object_reader.ts";
import { lockBranch, readHead } from "./repository.ts";
import { changedTree } from "./tree_rewrite.ts";
import { existingGitdir, type GitRooms, OID_RE } from "./git_rooms.ts";
import { checkChanges, noCommit } from "../room_rules.ts";

/** commitOn() of the port, the branch created by a hard link (atomic: made once or not). */
export async function commitOn(g: GitRooms, slug: string, c: BranchCommit): Promise<string> {
  checkChanges(c.changes, slug);
  if (c.branch !== undefined) checkBranch(slug, c.branch);
  const gitdir = await existingGitdir(g, slug);
  return await g.lock(slug, async () => {
    const oid = await withObjects(gitdir, async (db) => {
      for (const p of [c.on, ...(c.also ?? [])]) {
        if (!OID_RE.test(p) || !db.has(p)) throw noCommit(slug, p);
      }
      const made = new Map<string, GitObject>();
      const { tree: oldTree } = db.commit(c.on);
      const tree = changedTree(db, oldTree, c.changes, made, slug);
      if (tree === oldTree && !c.also?.length && c.branch === undefined) return c.on;
      const commit = commitObject(tree, [c.on, ...(c.also ?? [])], c.message, g.clock());
      made.set(commit.oid, commit);
      const builder = new PackBuilder();
      for (const object of made.values()) if (!db.has(object.oid)) builder.addObject(object);
      if (builder.count > 0) await installPack(gitdir, builder.finish());
      return commit.oid;
    });
    if (c.branch !== undefined) await createRef(gitdir, slug, c.branch, oid);
    return oid;
  });
}

/** branchHead() of the port. */
export async function branchHead(
  g: GitRooms,
  slug: string,
  branch: string,
): Promise<string | null> {
  checkBranch(slug, branch);
  const gitdir = await existingGitdir(g, slug);
  try {
    const oid = (await Deno.readTextFile(join(gitdir, "refs", "heads", branch))).trim();
    return OID_RE.test(oid) ? oid : null;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory) {
      return null;
    }
    throw e;
  }
}

/** moveHead() of the port: false, nothing moved, when the head is no longer `from`. */
export async function moveHead(
  g: GitRooms,
  slug: string,
  from: string,
  to: string,
): Promise<boolean> {
  const gitdir = await existingGitdir(g, slug);
  return await g.lock(slug, async () => {
    const known = await withObjects(gitdir, (db) => OID_RE.test(to) && db.has(to));
    if (!known) throw noCommit(slug, to);
    if (readHead(gitdir) !== from) return false;
    return await (await lockBranch(gitdir)).move(from, to);
  });
}

/** Refuses a branch name branchNameProblem() does not accept. */
function checkBranch(slug: string, branch: string): void {
  const problem = branchNameProblem(branch);
  if (problem) {
    throw new DvergrError(
      "USAGE",
      `Cannot use branch "${branch}" of room "${slug}": it ${problem}`,
      {
        hint: "Name branches like runs/20260101-abc",
      },
    );
  }
}

/**
 * Creates `refs/heads/<branch>` at `oid` once: written and synced under a temporary name, then
 * hard-linked into place (which fails when the branch exists), so a crash leaves no half ref.
 */
async function createRef(gitdir: string, slug: string, branch: string, oid: string) {
  const ref = join(gitdir, "refs", "heads", branch);
  await Deno.mkdir(join(ref, ".."), { recursive: true });
  const tmp = join(gitdir, `dvergr-ref.tmp-${crypto.randomUUID()}`);
  await writeDurable(tmp, encoder.encode(`${oid}\n`));
  try {
    await Deno.link(tmp, ref);
  } catch (e) {
    if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
    throw new DvergrError(
      "CONFLICT",
      `Cannot create branch "${branch}" of room "${slug}": it exists`,
      {
        hint: "Branches are made once; name another",
      },
    );
  } finally {
    await Deno.remove(tmp).catch(() => {});
  }
}
