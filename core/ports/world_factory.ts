/**
 * The world factory port: the world an attempt's candidate works in — a directory seeded
 * with the bundle's and the case's fixtures, whose capture directories are read back
 * (bounded) after the attempt — or a world in memory for candidates that reach it only
 * through its files. Implemented by adapters/world/world.ts.
 */
import type { WorldFiles } from "../bench/candidate.ts";

/** Bounds on what a capture reads back. */
export interface CaptureLimits {
  /** Files larger than this are skipped ("too-large"). Default 1 MiB. */
  maxFileBytes: number;
  /** Total bytes of text kept; files beyond are skipped ("over-total"). Default 8 MiB. */
  maxTotalBytes: number;
  /** Files kept; further files are skipped ("too-many"). Default 2,000. */
  maxFiles: number;
  /** Directory levels below a capture directory that are walked ("too-deep"). Default 32. */
  maxDepth: number;
  /** Entries (files, directories, anything) looked at in all; the rest "too-many". Default 50,000. */
  maxEntries: number;
}

/** Why a file was not captured; "changed": it was replaced while the capture read it. */
export type SkipReason =
  | "binary"
  | "too-large"
  | "over-total"
  | "too-many"
  | "symlink"
  | "special"
  | "changed"
  | "too-deep"
  | "unreadable";

export interface Capture {
  /** Text of every kept file, by world path, in sorted order. */
  files: Record<string, string>;
  /** Files seen but not kept, and why (the first 200; the rest in `skippedUnlisted`). */
  skipped: { path: string; reason: SkipReason; bytes?: number }[];
  /** Skipped entries beyond those listed. */
  skippedUnlisted: number;
  /** Bytes of text kept. */
  bytes: number;
  /**
   * The walk met more than `maxEntries` entries and stopped: what it did not look at (an
   * answer, perhaps) is not captured. Absent otherwise.
   */
  overEntries?: number;
}

export interface World {
  /** The world's directory on the host. */
  dir: string;
  files: WorldFiles;
  /** Reads the files under the given world directories back (bounded; links not followed). */
  capture(dirs: string[], limits?: Partial<CaptureLimits>): Promise<Capture>;
  /**
   * Removes the world's directory and everything in it. `reusable`: nothing of the attempt can
   * reach the directory any more (its candidate returned, isolated, without a fault): it may be
   * emptied and kept for a later world of the same parent instead (one made from it holds only
   * its own seeding, under a new name), unless something wrote to it through `files`.
   */
  remove(how?: { reusable?: boolean }): Promise<void>;
}

/** Makes attempt worlds. */
export interface WorldFactory {
  /**
   * A fresh directory under `parent` (default: the system's temporary directory) seeded
   * with `fixtures` (world path → text), plus the empty directories `mkdirs` (the capture
   * directories, so a candidate finds them).
   */
  create(
    fixtures: Record<string, string>,
    opts?: { parent?: string; mkdirs?: string[] },
  ): Promise<World>;
  /**
   * A world only in memory, for candidates that see it only through `files`: a capture
   * gives what a directory world would give for the same writes; `dir` is empty.
   */
  memory(fixtures: Record<string, string>, opts?: { mkdirs?: string[] }): World;
}
