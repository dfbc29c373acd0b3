/**
 * What every operation of the git room store works with: the rooms directory, the clock,
 * the per-room lock of this process and the pack limits; and where a room's repository is.
 *
 * Permissions: --allow-read on the rooms directory.
 */
import { join } from "node:path";
import { checkSlug } from "../../../core/room_slug.ts";
import { pathExists } from "../../files/fs.ts";
import { noRoom } from "../room_rules.ts";

/** The state of a git room store, passed to each of its operations. */
export interface GitRooms {
  /** The rooms directory: a room is the bare repository `<dir>/<slug>/`. */
  readonly dir: string;
  /** Commit times. */
  readonly clock: () => Date;
  /** Serialises work on one room within this process. */
  readonly lock: <T>(slug: string, f: () => Promise<T>) => Promise<T>;
  /** Packs a room may have before a write merges them into one. */
  readonly maxPacks: number;
  /** Loose objects a room may have before a write packs them. */
  readonly maxLoose: number;
  /** Called after a commit's pack is in place, before the branch moves (tests stop here). */
  readonly beforeBranchMove?: (slug: string) => void | Promise<void>;
}

/** The repository of room `slug` (refused when `slug` is not a room name). */
export function gitdirOf(g: GitRooms, slug: string): string {
  checkSlug(slug);
  return join(g.dir, slug);
}

/** Whether room `slug` exists. */
export function hasGitRoom(g: GitRooms, slug: string): Promise<boolean> {
  return pathExists(join(gitdirOf(g, slug), "HEAD"));
}

/** The repository of room `slug`, which must exist (else NOT_FOUND). */
export async function existingGitdir(g: GitRooms, slug: string): Promise<string> {
  const gitdir = gitdirOf(g, slug);
  if (!(await hasGitRoom(g, slug))) throw noRoom(slug);
  return gitdir;
}

/** A commit id: 40 lowercase hex digits. */
export const OID_RE = /^[0-9a-f]{40}$/;
