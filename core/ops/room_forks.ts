/**
 * Trying a change aside: room_fork makes a fork (a room of its own holding its parent's
 * history), room_diff says what the fork changed since its base and gives its state,
 * room_merge adopts the fork's changes into the parent as one commit, pinned to the state
 * its diff showed: a fork that changed since is refused, as the seed's review token is.
 */
import { z } from "zod";
import { DvergrError } from "../errors.ts";
import type { FileMap } from "../bundle/file_map.ts";
import { type ForkInfo, type RoomStore } from "../ports/room_store.ts";
import { checkSlug } from "../room_slug.ts";
import { defineOp, type Op } from "./op.ts";
import { listPageFields, pageList, pageParams } from "./paging.ts";
import { defineFormat, fields } from "../json_format.ts";

const ROOM_FORK_FORMAT = defineFormat(
  "room-fork",
  1,
  "A fork made by room_fork / `dvergr room fork`.",
  z.object({
    room: fields.room.describe("The fork's slug"),
    parent: fields.room.describe("The room it was forked from"),
    base: z.string().describe("The parent's commit the fork starts at"),
  }),
);
const ROOM_DIFF_FORMAT = defineFormat(
  "room-diff",
  1,
  "What a fork changed since its base, and its state for room_merge (room_diff).",
  z.object({
    room: fields.room.describe("The fork's slug"),
    parent: fields.room,
    base: z.string(),
    state: z.string().describe("The fork's state: room_merge's expect_state"),
    ...listPageFields,
    changes: z.array(z.object({
      path: z.string(),
      change: z.enum(["added", "modified", "removed"]),
      bytes: z.number().int(),
    })),
    parentChanged: z.array(z.string()).describe("Paths the parent changed since the base"),
    conflicts: z.array(z.string()).describe("Paths both changed differently"),
  }),
);
const ROOM_MERGE_FORMAT = defineFormat(
  "room-merge",
  1,
  "A fork's changes adopted into its parent (room_merge).",
  z.object({
    room: fields.room.describe("The fork's slug"),
    parent: fields.room,
    merged: z.boolean().describe("false: the fork changed nothing; no commit"),
    commit: z.string().nullable(),
    paths: z.array(z.string()),
  }),
);

const room = z.string().describe("Room slug: lowercase letters, digits and dashes, e.g. `books`");

async function forkInfo(rooms: RoomStore, slug: string): Promise<ForkInfo> {
  const info = await rooms.forkOf(slug);
  if (!info) {
    throw new DvergrError("USAGE", `Room ${slug} is not a fork`, {
      hint: `Fork it first: room_fork {room: "${slug}"}, then work in the fork`,
      details: { room: slug },
    });
  }
  return info;
}

/** Paths whose text differs between two file maps (added, modified or removed in `to`). */
function changed(from: FileMap, to: FileMap): Map<string, "added" | "modified" | "removed"> {
  const out = new Map<string, "added" | "modified" | "removed">();
  for (const [p, t] of to) {
    const was = from.get(p);
    if (was === undefined) out.set(p, "added");
    else if (was !== t) out.set(p, "modified");
  }
  for (const p of from.keys()) if (!to.has(p)) out.set(p, "removed");
  return new Map([...out].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0));
}

/** What a fork changed since its base, what its parent changed, and where both did. */
async function compare(rooms: RoomStore, slug: string) {
  const info = await forkInfo(rooms, slug);
  const state = await rooms.head(slug);
  const [base, fork, parent] = await Promise.all([
    rooms.readFiles(info.parent, undefined, info.base),
    rooms.readFiles(slug),
    rooms.readFiles(info.parent),
  ]);
  const ours = changed(base, fork);
  const theirs = changed(base, parent);
  const conflicts = [...ours.keys()].filter((p) => theirs.has(p) && fork.get(p) !== parent.get(p));
  return { info, state, fork, parent, ours, theirs, conflicts };
}

export const roomFork = defineOp({
  name: "room_fork",
  title: "Fork a room",
  description:
    "Makes a fork of a room to try a change aside: a room of its own (named `as`, default <room>-fork-N) holding the room's history, starting at its latest commit. Work in it with room_write, see the change with room_diff, adopt it with room_merge.",
  kind: "write",
  toolset: "rooms",
  roomScoped: true,
  input: z.strictObject({
    room,
    as: z.string().optional().describe("The fork's slug (default <room>-fork-N)"),
  }),
  output: ROOM_FORK_FORMAT,
  async handler(ctx, input) {
    const rooms = ctx.home.rooms;
    if (input.as !== undefined) {
      checkSlug(input.as);
      const info = await rooms.forkRoom(input.room, input.as);
      return { room: input.as, ...info };
    }
    for (let n = 1;; n++) {
      const slug = `${input.room.slice(0, 50)}-fork-${n}`;
      if (await rooms.hasRoom(slug)) continue;
      try {
        const info = await rooms.forkRoom(input.room, slug);
        return { room: slug, ...info };
      } catch (e) {
        // Another process took this name meanwhile: the next one.
        if (e instanceof DvergrError && e.code === "CONFLICT" && await rooms.hasRoom(slug)) {
          continue;
        }
        throw e;
      }
    }
  },
});

export const roomDiff = defineOp({
  name: "room_diff",
  title: "A fork's changes",
  description:
    "What a fork changed since its base (paths added, modified, removed; at most `limit` from `offset`), the paths its parent changed meanwhile, the conflicts (paths both changed differently), and the fork's `state`: pass it to room_merge as expect_state.",
  kind: "read",
  toolset: "rooms",
  idempotent: true,
  roomScoped: true,
  input: z.strictObject({
    room: room.describe("The fork's slug"),
    ...pageParams("path", 2000, 500),
  }),
  output: ROOM_DIFF_FORMAT,
  async handler(ctx, input) {
    const c = await compare(ctx.home.rooms, input.room);
    const all = [...c.ours].map(([path, change]) => ({
      path,
      change,
      bytes: new TextEncoder().encode(c.fork.get(path) ?? "").length,
    }));
    const { items, ...page } = pageList(
      all,
      input.offset ?? 0,
      input.limit ?? 500,
      "room_diff with offset",
    );
    return {
      room: input.room,
      parent: c.info.parent,
      base: c.info.base,
      state: c.state,
      ...page,
      changes: items,
      parentChanged: [...c.theirs.keys()],
      conflicts: c.conflicts,
    };
  },
});

export const roomMerge = defineOp({
  name: "room_merge",
  title: "Merge a fork",
  description:
    "Adopts a fork's changes into its parent room as one commit. `expect_state` is the state room_diff gave: a fork that changed since is refused, and so is a merge where the parent changed a path the fork changed too. Afterwards the fork holds the parent's files and its base is the merge.",
  kind: "destructive",
  toolset: "rooms",
  roomScoped: true,
  input: z.strictObject({
    room: room.describe("The fork's slug"),
    expect_state: z.string().describe("The fork's state as room_diff returned it"),
    message: z.string().optional().describe("Commit message (default: Merge fork <room>)"),
  }),
  output: ROOM_MERGE_FORMAT,
  async handler(ctx, input) {
    const rooms = ctx.home.rooms;
    const c = await compare(rooms, input.room);
    if (c.state !== input.expect_state) {
      throw new DvergrError(
        "CONFLICT",
        `Cannot merge fork ${input.room}: it changed since its diff was read (state ${c.state}, expected ${input.expect_state})`,
        {
          hint: `Read room_diff {room: "${input.room}"} again and merge with its state`,
          details: { room: input.room, state: c.state, expect_state: input.expect_state },
          result: true,
        },
      );
    }
    if (c.conflicts.length > 0) {
      throw new DvergrError(
        "CONFLICT",
        `Cannot merge fork ${input.room} into ${c.info.parent}: both changed ${
          c.conflicts.slice(0, 5).join(", ")
        }${c.conflicts.length > 5 ? ` and ${c.conflicts.length - 5} more` : ""}`,
        {
          hint:
            `Write the parent's version into the fork (or the fork's into the parent), then room_diff and merge again`,
          details: { room: input.room, conflicts: c.conflicts },
          result: true,
        },
      );
    }
    if (c.ours.size === 0) {
      return { room: input.room, parent: c.info.parent, merged: false, commit: null, paths: [] };
    }
    const changes = new Map<string, string | null>();
    for (const p of c.ours.keys()) changes.set(p, c.fork.get(p) ?? null);
    const commit = await rooms.writeFiles(
      c.info.parent,
      changes,
      input.message?.trim() || `Merge fork ${input.room}`,
    );
    // The fork takes what its parent changed meanwhile, so its next diff shows only new work.
    if (c.theirs.size > 0) {
      const update = new Map<string, string | null>();
      for (const p of c.theirs.keys()) update.set(p, c.parent.get(p) ?? null);
      await rooms.writeFiles(input.room, update, `Update from ${c.info.parent} after the merge`);
    }
    await rooms.setForkBase(input.room, commit);
    return {
      room: input.room,
      parent: c.info.parent,
      merged: true,
      commit,
      paths: [...c.ours.keys()],
    };
  },
});

/** The fork ops, listed after the room ops. */
export const ROOM_FORK_OPS: Op[] = [roomFork, roomDiff, roomMerge];
