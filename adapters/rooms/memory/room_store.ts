/**
 * Rooms in memory: each room a list of snapshots (commit, files) in a Map. The same
 * contract as the git store (tests/ports/room_store_contract.ts); the memory home's rooms
 * and tests'. Needs no permission.
 */
import { checkSlug } from "../../../core/room_slug.ts";
import { createHash } from "node:crypto";
import { fileDirConflict, type FileMap, sortedFiles } from "../../../core/bundle/file_map.ts";
import {
  branchNameProblem,
  type CommitInfo,
  type ForkInfo,
  type RoomStore,
} from "../../../core/ports/room_store.ts";
import { DvergrError } from "../../../core/errors.ts";
import {
  blockerRemovals,
  checkChanges,
  conflictError,
  dirChanges,
  dirPrefix,
  noCommit,
  noRoom,
  roomExists,
  underPrefix,
} from "../room_rules.ts";

/** An in-memory room store: the same contract, snapshots in a Map (tests). */
export function memoryRoomStore(clock: () => Date = () => new Date()): RoomStore {
  const rooms = new Map<string, { commit: CommitInfo; files: FileMap }[]>();
  const forks = new Map<string, ForkInfo>();
  /** Commits beside the head's line (forks of runs, merges), by room and id. */
  const aside = new Map<string, Map<string, { commit: CommitInfo; files: FileMap }>>();
  /** Branches besides the head's, by room: name → commit id. */
  const branches = new Map<string, Map<string, string>>();
  const snapshotOf = (slug: string, id: string) =>
    head(slug).find((h) => h.commit.id === id) ?? aside.get(slug)?.get(id);
  const checkBranch = (slug: string, branch: string) => {
    const problem = branchNameProblem(branch);
    if (problem) {
      throw new DvergrError(
        "USAGE",
        `Cannot use branch "${branch}" of room "${slug}": it ${problem}`,
      );
    }
  };
  const head = (slug: string) => {
    const r = rooms.get(slug);
    if (!r) throw noRoom(slug);
    return r;
  };
  const commitId = (parent: string | null, message: string, files: FileMap) => {
    const h = createHash("sha1").update(JSON.stringify([parent, message, [...sortedFiles(files)]]));
    return h.update(String(rooms.size) + clock().toISOString()).digest("hex");
  };
  return {
    async createRoom(slug) {
      await Promise.resolve();
      checkSlug(slug);
      if (rooms.has(slug)) return false;
      const files: FileMap = new Map();
      const message = `Create room ${slug}`;
      rooms.set(slug, [{
        commit: {
          id: commitId(null, message, files),
          message,
          at: clock().toISOString(),
          parents: [],
        },
        files,
      }]);
      return true;
    },
    hasRoom: (slug) => Promise.resolve(rooms.has(slug)),
    listRooms: () => Promise.resolve([...rooms.keys()].sort()),
    async writeFiles(slug, changes, message) {
      await Promise.resolve();
      checkChanges(changes, slug);
      const history = head(slug);
      const last = history[history.length - 1];
      const files = new Map(last.files);
      for (const [p, text] of changes) {
        if (text === null) files.delete(p);
        else files.set(p, text);
      }
      const conflict = fileDirConflict(files.keys());
      if (conflict) throw conflictError(slug, conflict);
      const same = files.size === last.files.size &&
        [...files].every(([p, t]) => last.files.get(p) === t);
      if (same) return last.commit.id;
      const id = commitId(last.commit.id, message, files);
      history.push({
        commit: { id, message, at: clock().toISOString(), parents: [last.commit.id] },
        files,
      });
      return id;
    },
    async readFiles(slug, prefix, at) {
      await Promise.resolve();
      const history = head(slug);
      const snapshot = at === undefined ? history[history.length - 1] : snapshotOf(slug, at);
      if (!snapshot) throw noCommit(slug, at!);
      const out: FileMap = new Map();
      for (const [p, t] of sortedFiles(snapshot.files)) {
        if (underPrefix(p, prefix)) out.set(p, t);
      }
      return Promise.resolve(out);
    },
    async replaceDir(slug, prefix, files, message, opts) {
      await Promise.resolve();
      const p = dirPrefix(prefix);
      const history = head(slug);
      const current = history[history.length - 1].files;
      const changes = dirChanges(p, files, (path) => current.get(path), current.keys());
      if (changes.size === 0) return null;
      if (opts?.removeFilesInTheWay) blockerRemovals(p, changes);
      return await this.writeFiles(slug, changes, message);
    },
    // Async, so an unknown room is a rejected promise (as the git store's), not a throw.
    async log(slug) {
      await Promise.resolve();
      return head(slug).map((h) => h.commit).reverse();
    },
    async head(slug) {
      await Promise.resolve();
      const history = head(slug);
      return history[history.length - 1].commit.id;
    },
    async forkRoom(from, to) {
      await Promise.resolve();
      checkSlug(to);
      const history = head(from);
      if (rooms.has(to)) throw roomExists(to);
      rooms.set(to, history.map((h) => ({ commit: h.commit, files: new Map(h.files) })));
      const info = { parent: from, base: history[history.length - 1].commit.id };
      forks.set(to, info);
      return info;
    },
    async forkOf(slug) {
      await Promise.resolve();
      head(slug);
      return forks.get(slug) ?? null;
    },
    async commitOn(slug, c) {
      await Promise.resolve();
      checkChanges(c.changes, slug);
      if (c.branch !== undefined) checkBranch(slug, c.branch);
      const parents = [c.on, ...(c.also ?? [])];
      const snaps = parents.map((p) => snapshotOf(slug, p));
      const missing = parents.find((_, i) => !snaps[i]);
      if (missing !== undefined) throw noCommit(slug, missing);
      const base = snaps[0]!;
      const files = new Map(base.files);
      for (const [p, text] of c.changes) {
        if (text === null) files.delete(p);
        else files.set(p, text);
      }
      const conflict = fileDirConflict(files.keys());
      if (conflict) throw conflictError(slug, conflict);
      const named = branches.get(slug) ?? new Map<string, string>();
      if (c.branch !== undefined && named.has(c.branch)) {
        throw new DvergrError(
          "CONFLICT",
          `Cannot create branch "${c.branch}" of room "${slug}": it exists`,
        );
      }
      const same = files.size === base.files.size &&
        [...files].every(([p, t]) => base.files.get(p) === t);
      if (same && parents.length === 1 && c.branch === undefined) return c.on;
      const id = commitId(c.on, c.message + parents.join(","), files);
      const entry = {
        commit: { id, message: c.message, at: clock().toISOString(), parents },
        files,
      };
      if (!aside.has(slug)) aside.set(slug, new Map());
      aside.get(slug)!.set(id, entry);
      if (c.branch !== undefined) {
        named.set(c.branch, id);
        branches.set(slug, named);
      }
      return id;
    },
    async branchHead(slug, branch) {
      await Promise.resolve();
      checkBranch(slug, branch);
      head(slug);
      return branches.get(slug)?.get(branch) ?? null;
    },
    async moveHead(slug, from, to) {
      await Promise.resolve();
      const history = head(slug);
      const target = snapshotOf(slug, to);
      if (!target) throw noCommit(slug, to);
      if (history[history.length - 1].commit.id !== from) return false;
      history.push({ commit: target.commit, files: new Map(target.files) });
      return true;
    },
    setForkBase(slug, base) {
      const info = forks.get(slug);
      if (info) forks.set(slug, { ...info, base });
      return Promise.resolve();
    },
  };
}
