/**
 * Writing to a git room's head: one commit whose new objects are one pack, then the branch
 * moves under git's lock; a write that finds the head moved by another process is built
 * again on the new head. Installing a directory (replaceDir) writes only what changed.
 *
 * Permissions: --allow-read and --allow-write on the rooms directory.
 */
import { DvergrError } from "../../../core/errors.ts";
import type { FileMap } from "../../../core/bundle/file_map.ts";
import type { ReplaceDirOptions } from "../../../core/ports/room_store.ts";
import { commitObject, type GitObject, objectId } from "../../../core/codecs/git/objects.ts";
import { installPack, PackBuilder } from "./pack_write.ts";
import { withObjects } from "./object_reader.ts";
import { type BranchLock, lockBranch, readHead } from "./repository.ts";
import { consolidate } from "./pack_merge.ts";
import { changedTree, treeEntries } from "./tree_rewrite.ts";
import { existingGitdir, gitdirOf, type GitRooms, hasGitRoom } from "./git_rooms.ts";
import { blockerRemovals, checkChanges, dirChanges, dirPrefix, noRoom } from "../room_rules.ts";

/** writeFiles() of the port: one commit on the head, or the head when nothing changes. */
export async function writeFiles(
  g: GitRooms,
  slug: string,
  changes: Map<string, string | null>,
  message: string,
): Promise<string> {
  checkChanges(changes, slug);
  const gitdir = gitdirOf(g, slug);
  return await g.lock(slug, async () => {
    if (!(await hasGitRoom(g, slug))) throw noRoom(slug);
    // First optimistically: the branch is locked only to move it, for milliseconds. When
    // another process moved it meanwhile, again holding the lock throughout, so that
    // busy rooms cannot starve a writer.
    for (let attempt = 0;; attempt++) {
      const held = attempt === 0 ? null : await lockBranch(gitdir);
      const result = await commitOnHead(g, gitdir, slug, changes, message, held)
        .finally(() => held?.release());
      if (result) {
        if (result.packs > g.maxPacks || result.loose > g.maxLoose) {
          // The commit stands whatever happens here; a merge that failed (a full disk)
          // is tried again at the next write.
          await consolidate(gitdir, g.maxPacks).catch(() => {});
        }
        return result.commit;
      }
      if (attempt >= 3) {
        // Even under the lock: a writer that ignores git's lock (or took ours as stale).
        throw new DvergrError(
          "CONFLICT",
          `Cannot commit to room "${slug}": another process keeps moving its branch`,
          { hint: "Retry when the other writers are done", result: true },
        );
      }
    }
  });
}

/**
 * One try at a commit on the head: null when another process moved the branch between
 * reading the head and moving it (with `held`, the branch lock held throughout).
 */
function commitOnHead(
  g: GitRooms,
  gitdir: string,
  slug: string,
  changes: Map<string, string | null>,
  message: string,
  held: BranchLock | null,
): Promise<{ commit: string; packs: number; loose: number } | null> {
  return withObjects(gitdir, async (db) => {
    const parent = readHead(gitdir);
    const made = new Map<string, GitObject>();
    const { tree: oldTree } = db.commit(parent);
    const tree = changedTree(db, oldTree, changes, made, slug);
    if (tree === oldTree) return { commit: parent, packs: 0, loose: 0 };
    const commit = commitObject(tree, [parent], message, g.clock());
    made.set(commit.oid, commit);
    const builder = new PackBuilder();
    for (const object of made.values()) if (!db.has(object.oid)) builder.addObject(object);
    await installPack(gitdir, builder.finish());
    await g.beforeBranchMove?.(slug);
    const branch = held ?? await lockBranch(gitdir);
    if (!(await branch.move(parent, commit.oid))) return null;
    return { commit: commit.oid, packs: db.packs.length + 1, loose: db.looseOids().size };
  });
}

/** replaceDir() of the port: compares by blob id, so no blob is read to see what changed. */
export async function replaceDir(
  g: GitRooms,
  slug: string,
  prefix: string,
  files: FileMap,
  message: string,
  opts?: ReplaceDirOptions,
): Promise<string | null> {
  const p = dirPrefix(prefix);
  const gitdir = await existingGitdir(g, slug);
  const oids = await withObjects(
    gitdir,
    (db) => treeEntries(db, db.commit(readHead(gitdir)).tree, p),
  );
  const changes = dirChanges(
    p,
    files,
    (path) => oids.get(path),
    oids.keys(),
    (text, oid) => gitBlobOid(text) === oid,
  );
  if (changes.size === 0) return null;
  if (opts?.removeFilesInTheWay) blockerRemovals(p, changes);
  return await writeFiles(g, slug, changes, message);
}

/** The git object id of a blob holding `text` (UTF-8). */
function gitBlobOid(text: string): string {
  return objectId("blob", new TextEncoder().encode(text));
}
