/**
 * The room store port: rooms as versioned workspaces (`workflows/<name>/…` bundles, tables,
 * anything a client writes), committed, forked, diffed and merged. Implemented by git
 * repositories (adapters/rooms/git/room_store.ts, what a home keeps) and in memory
 * (adapters/rooms/memory/room_store.ts); tests/ports/room_store_contract.ts says what both
 * must do.
 */
import type { FileMap } from "../bundle/file_map.ts";

export interface CommitInfo {
  id: string;
  message: string;
  /** ISO time of the commit. */
  at: string;
  parents: string[];
}

export interface RoomStore {
  /**
   * Creates an empty room (one initial commit); false when it already exists. With
   * `initial`, the new room's initial commit is followed by one that makes `initial.prefix/`
   * hold `initial.files` (as replaceDir() would), both written at once: the room appears
   * holding them (a bundle installed in a new room: one write instead of two).
   */
  createRoom(slug: string, initial?: InitialDir): Promise<boolean>;
  hasRoom(slug: string): Promise<boolean>;
  /** Every room's slug, sorted. */
  listRooms(): Promise<string[]>;
  /**
   * Writes exactly the given paths as one commit (`null` removes a path) and returns the
   * commit id; when the changes leave the workspace as it was, makes no commit and returns
   * the current head.
   */
  writeFiles(slug: string, changes: Map<string, string | null>, message: string): Promise<string>;
  /**
   * The workspace at the head, or at commit `at` of the room's history (only the files
   * under `prefix/` when given, keeping full paths).
   */
  readFiles(slug: string, prefix?: string, at?: string): Promise<FileMap>;
  /**
   * Makes the directory `prefix/` hold exactly `files` (paths relative to it): writes what
   * differs, removes what `files` lacks, in one commit. Returns the commit id, or null when
   * the directory already held exactly these files (no commit). Used to install a bundle.
   */
  replaceDir(
    slug: string,
    prefix: string,
    files: FileMap,
    message: string,
    opts?: ReplaceDirOptions,
  ): Promise<string | null>;
  /** Commits from the head back to the first. */
  log(slug: string): Promise<CommitInfo[]>;
  /** The head commit's id (cheap: no history is read). */
  head(slug: string): Promise<string>;
  /**
   * Makes room `to` a fork of room `from`: a room of its own holding `from`'s history, its
   * head at `from`'s head (the fork's base). Refused when `to` exists.
   */
  forkRoom(from: string, to: string): Promise<ForkInfo>;
  /** What a room was forked from, or null for a room that is no fork. */
  forkOf(slug: string): Promise<ForkInfo | null>;
  /** Records a fork's new base (a commit of its parent, after a merge). */
  setForkBase(slug: string, base: string): Promise<void>;
  /**
   * Makes a commit whose tree is commit `on`'s with `changes` applied (as writeFiles), its
   * parents `on` and then `also`, without moving the room's head. With `branch`, the branch
   * `refs/heads/<branch>` is created at it (CONFLICT when it exists; `branchNameProblem()`
   * says which names are refused). Returns the commit id (`on` itself when the changes change
   * nothing and there are no other parents, and no branch is asked for).
   */
  commitOn(slug: string, commit: BranchCommit): Promise<string>;
  /** The commit a branch made by commitOn() points at, or null when there is no such branch. */
  branchHead(slug: string, branch: string): Promise<string | null>;
  /**
   * Moves the room's head from `from` to commit `to` (made by commitOn()) in one step; false,
   * nothing moved, when the head is no longer `from` (another writer came first).
   */
  moveHead(slug: string, from: string, to: string): Promise<boolean>;
}

/** A commit made beside the room's head (a run's fork, a merge). */
export interface BranchCommit {
  /** The commit whose tree the changes apply to (the first parent). */
  on: string;
  changes: Map<string, string | null>;
  message: string;
  /** Further parents (a merge's second parent). */
  also?: string[];
  /** The branch to create at the commit (e.g. `runs/<id>`). */
  branch?: string;
}

/**
 * Why a branch name is refused (null when it is fine): lowercase segments of letters, digits,
 * dots, dashes and underscores, separated by slashes, not `main` and not ending in `.lock`.
 */
export function branchNameProblem(name: string): string | null {
  if (name === "main") return "is the room's own branch";
  if (!/^[a-z0-9][a-z0-9._-]{0,99}(\/[a-z0-9][a-z0-9._-]{0,99}){0,4}$/.test(name)) {
    return "is not lowercase segments of letters, digits, dots, dashes and underscores";
  }
  if (/\.\.|\.lock(\/|$)|\.(\/|$)/.test(name)) {
    return 'holds "..", a ".lock" or a segment ending in "."';
  }
  return null;
}

/** A fork's parent room and the parent's commit it starts from (or was last merged at). */
export interface ForkInfo {
  parent: string;
  base: string;
}

/** What a new room's directory `prefix/` holds from its start (createRoom()). */
export interface InitialDir {
  prefix: string;
  files: FileMap;
  message: string;
}

export interface ReplaceDirOptions {
  /**
   * Remove a file standing where `prefix` or one of its parents goes (an explicit --force);
   * without it such a file makes the write fail rather than silently disappear.
   */
  removeFilesInTheWay?: boolean;
}

/**
 * Makes `workflows/<name>/` of a room hold exactly `files` (writing what changed, removing
 * what the bundle no longer has) in one commit. Returns the commit id, or null when the
 * room already held exactly these files.
 */
export function syncBundle(
  rooms: RoomStore,
  slug: string,
  name: string,
  files: FileMap,
): Promise<string | null> {
  const { prefix, message } = bundleDir(name, files);
  return rooms.replaceDir(slug, prefix, files, message);
}

/** The directory of bundle `name` in a room, as syncBundle() writes it. */
export function bundleDir(name: string, files: FileMap): InitialDir {
  return {
    prefix: `workflows/${name}`,
    files,
    message: `Write bundle ${name} (${files.size} files)`,
  };
}
