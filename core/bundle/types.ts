/**
 * A parsed, shape-checked bundle: the file map plus everything read out of it.
 * Values read from EDN are in their plain JS form (core/edn/plain.ts), as checkers see them.
 */
import type { FileMap } from "./file_map.ts";
import type { Tagged } from "../checker.ts";

export interface WorkflowDefinition {
  title: string;
  doc?: string;
  /** Default parameter values (plain JS). */
  params: Record<string, unknown>;
  /** Template with {param} placeholders. */
  task: string;
  /** "developer" (the default) writes files; anything else is read-only. */
  profile: string;
  /** World directories the checker sees; default ["/out"]. */
  capture: string[];
  timeoutMs?: number;
  fetched: boolean;
  judge?: { model: string; maxRequests: number };
  allowedSources?: string[];
  blockedSources?: string[];
  web?: "live" | "frozen";
  review?: Record<string, unknown>;
}

export interface DamagedVariant {
  files: Record<string, string>;
  fetched?: Record<string, string>;
  judgements?: Record<string, string>;
  /** Check names (keywords without colon) this damage must fail. */
  loses: string[];
}

export interface Calibration {
  /** Whose gold to score against. */
  case?: string;
  /** Files of a correct answer, by world path; null when calibration.edn has no :reference. */
  reference: Record<string, string> | null;
  fetched: Record<string, string>;
  judgements: Record<string, string>;
  damaged: Record<string, DamagedVariant>;
  /** `:reviews`: updates a run could leave and whether the review must approve them. */
  reviews: Record<string, ReviewCase>;
}

/** One update of calibration.edn's `:reviews`: world path → text (null: removed). */
export interface ReviewCase {
  files: Record<string, string | null>;
  expect: "approve" | "escalate";
}

export interface BundleCase {
  id: string;
  /** The case's gold.edn (plain), or null. */
  gold: unknown;
  /** Case fixtures by world path ("/docs/case.edn"). */
  fixtures: Record<string, string>;
  /** A world generator.clj made: its gold as EDN, which a checker.clj gets as it was. */
  goldEdn?: Tagged;
}

export interface Bundle {
  name: string;
  /** Content id (docs/compatibility.md §3.2). */
  id: string;
  files: FileMap;
  definition: WorkflowDefinition;
  /** The source of the checker it runs: `checkerFile`'s text. */
  checker: string;
  /**
   * checker.js, or checker.clj (a Clojure namespace, the earlier system's checker) when
   * the bundle has no checker.js.
   */
  checkerFile: "checker.js" | "checker.clj";
  /** The bundle's gold.edn (plain), or null. */
  gold: unknown;
  calibration: Calibration | null;
  certification: Record<string, unknown> | null;
  /** web.edn pages (plain) when :web :frozen. */
  web: Record<string, { title: string; body: string }> | null;
  /** Shared fixtures by world path. */
  fixtures: Record<string, string>;
  /**
   * Cases sorted by id (string order); empty for a single-environment bundle, and for a
   * bundle with generator.js until its worlds are generated (core/bundle/generated_cases.ts).
   */
  cases: BundleCase[];
  /** Set once `cases` are generated worlds: what an experiment's definition records of them. */
  generated?: GeneratedIdentity;
}

/** What an experiment's definition records of the worlds generator.js made for it. */
export interface GeneratedIdentity {
  file: "generator.js" | "generator.clj";
  /** SHA-256 of the generator's source. */
  generator: string;
  split: "train" | "test";
  /** Worlds 0..count-1. */
  count: number;
  /** The benchmark seed each world's seed is derived from. */
  seed: number;
  /** SHA-256 over the worlds' own hashes: the worlds themselves, as generated. */
  worlds: string;
}

/** One problem of a bundle's shape, located as precisely as known. */
export interface BundleProblem {
  file: string;
  line?: number;
  column?: number;
  /** The field at fault, e.g. ":capture" or ":damaged :nothing :loses". */
  field?: string;
  message: string;
}
