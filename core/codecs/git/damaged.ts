/**
 * The error of a room whose repository cannot be read as git wrote it (a truncated pack, a
 * malformed object), shared by the git readers of `adapters/rooms/git/`.
 */
import { DvergrError } from "../../errors.ts";

/** A ROOM_INVALID error naming the room (the last segment of `gitdir`) and what is wrong. */
export function damaged(gitdir: string, what: string): DvergrError {
  const slug = gitdir.split(/[\\/]/).pop();
  return new DvergrError("ROOM_INVALID", `Cannot read room "${slug}": ${what}`, {
    hint: `The room's repository is damaged; \`git -C ${gitdir} fsck\` lists what is wrong`,
  });
}

/** Whether `e` is a Node-style error with this `code` (such as "ENOENT"). */
export function hasCode(e: unknown, code: string): boolean {
  return (e as { code?: string })?.code === code;
}
