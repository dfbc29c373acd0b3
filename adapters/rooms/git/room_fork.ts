/**
 * Forks of git rooms: a copy of the parent's repository whose head is the parent's head at
 * the time, with the parent and that base recorded beside the repository's own files.
 *
 * Permissions: --allow-read and --allow-write on the rooms directory.
 */
import { join } from "node:path";
import type { ForkInfo } from "../../../core/ports/room_store.ts";
import { encoder } from "../../../core/codecs/git/objects.ts";
import { writeDurable } from "./pack_write.ts";
import { BRANCH, readHead } from "./repository.ts";
import { existingGitdir, gitdirOf, type GitRooms, hasGitRoom } from "./git_rooms.ts";
import { noRoom, roomExists } from "../room_rules.ts";

/** Where a git room keeps what it was forked from (beside the repository's own files). */
const FORK_FILE = "dvergr-fork.json";

/** forkRoom() of the port: refused when `to` exists; a half-made fork never appears. */
export async function forkRoom(g: GitRooms, from: string, to: string): Promise<ForkInfo> {
  const src = gitdirOf(g, from);
  const dst = gitdirOf(g, to);
  if (!(await hasGitRoom(g, from))) throw noRoom(from);
  return await g.lock(to, async () => {
    if (await hasGitRoom(g, to)) throw roomExists(to);
    // Copied into a temporary sibling, then renamed: a half-made fork never appears. The
    // branch is read before the copy, so a write to the parent meanwhile is not the base.
    const base = readHead(src);
    const tmp = `${dst}.tmp-${crypto.randomUUID()}`;
    try {
      await copyDir(src, tmp);
      await Deno.remove(join(tmp, BRANCH)).catch(() => {});
      await writeDurable(join(tmp, BRANCH), encoder.encode(`${base}\n`));
      const info: ForkInfo = { parent: from, base };
      await Deno.writeTextFile(join(tmp, FORK_FILE), JSON.stringify(info) + "\n");
      await Deno.rename(tmp, dst);
      return info;
    } catch (e) {
      await Deno.remove(tmp, { recursive: true }).catch(() => {});
      if (await hasGitRoom(g, to)) throw roomExists(to);
      throw e;
    }
  });
}

/** forkOf() of the port: null for a room that is no fork. */
export async function forkOf(g: GitRooms, slug: string): Promise<ForkInfo | null> {
  const gitdir = await existingGitdir(g, slug);
  try {
    const info = JSON.parse(await Deno.readTextFile(join(gitdir, FORK_FILE)));
    return { parent: String(info.parent), base: String(info.base) };
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
}

/** setForkBase() of the port: the record is replaced by a rename, never half written. */
export async function setForkBase(g: GitRooms, slug: string, base: string): Promise<void> {
  const gitdir = gitdirOf(g, slug);
  const info = await forkOf(g, slug);
  if (!info) return;
  const tmp = join(gitdir, `${FORK_FILE}.tmp-${crypto.randomUUID()}`);
  await Deno.writeTextFile(tmp, JSON.stringify({ ...info, base }) + "\n");
  await Deno.rename(tmp, join(gitdir, FORK_FILE));
}

async function copyDir(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const e of Deno.readDir(from)) {
    // A lock is another writer's, of the room forked from.
    if (e.name.endsWith(".lock") || e.name === FORK_FILE) continue;
    const a = join(from, e.name);
    const b = join(to, e.name);
    if (e.isDirectory) await copyDir(a, b);
    else if (e.isFile) await Deno.copyFile(a, b);
  }
}
