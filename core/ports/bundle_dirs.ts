/**
 * The bundle directories port: bundles read from and written to directories of the file
 * system (`dvergr check DIR`, `catalog_import {dir}`). Implemented by adapters/files/.
 */
import type { FileBundle, FileMap } from "../bundle/file_map.ts";

export interface BundleDirs {
  /** The bundle in directory `dir` (every file, as text); a DvergrError saying why not. */
  read(dir: string): Promise<FileBundle>;
  /**
   * Writes `files` as directory `dir` all at once (a temporary sibling renamed in), refusing
   * an existing directory unless `force`; returns the paths written.
   */
  writeOnce(dir: string, files: FileMap, opts?: { force?: boolean }): Promise<string[]>;
}
