/**
 * Which tools a connection sees: a profile (bench, readonly, admin), a custom list of
 * toolsets, or exactly named tools, optionally pinned to one room. Tools outside the
 * selection are neither listed nor callable. Unknown names fail at start, listing the
 * known ones.
 */
import { DvergrError } from "../core/errors.ts";
import type { Op } from "../core/ops/op.ts";
import { checkSlug } from "../core/room_slug.ts";
import { codeOps, type JsEvalRunner } from "./code_profile.ts";

export interface Profile {
  doc: string;
  pick(op: Op): boolean;
}

/** Toolsets of the default profile: everything to build, run and read a benchmark. */
export const BENCH_TOOLSETS = ["rooms", "files", "catalog", "bench", "jobs", "scorecards"];

export const PROFILES: Record<string, Profile> = {
  bench: {
    doc: `toolsets ${BENCH_TOOLSETS.join(", ")} (everything but promotion)`,
    pick: (op) => BENCH_TOOLSETS.includes(op.toolset),
  },
  readonly: { doc: "every read op", pick: (op) => op.kind === "read" },
  admin: { doc: "every op, catalog_promote included", pick: () => true },
  code: {
    doc: "js_eval and describe: a program calls the bench profile's ops",
    // Its two tools are made over the bench profile's ops (selectTools).
    pick: () => false,
  },
};

export const DEFAULT_PROFILE = "bench";

export interface SelectionRequest {
  profile?: string;
  toolsets?: string[];
  /** Pins the connection to this room (needs `tools`). */
  room?: string;
  tools?: string[];
}

export interface Selection {
  /** The selected ops, in registry order. */
  ops: Op[];
  /** The room a pinned connection works in, else null. */
  room: string | null;
  /** How the selection was made, for the log ("profile bench", …). */
  label: string;
}

function unknown(what: string, names: string[], known: string[]): DvergrError {
  const list = names.map((n) => `"${n}"`).join(", ");
  return new DvergrError(
    "USAGE",
    `Unknown dvergr MCP ${what}${names.length > 1 ? "s" : ""}: ${list} (known: ${
      known.join(", ")
    })`,
    { hint: `Choose from: ${known.join(", ")}` },
  );
}

function splitList(values: string[]): string[] {
  return values.flatMap((v) => v.split(",")).map((s) => s.trim()).filter((s) => s !== "");
}

/**
 * Resolves a selection request against the registry's ops, or throws a USAGE error. The
 * code profile needs `jsEval`, the sandbox its programs run in.
 */
export function selectTools(
  ops: Op[],
  req: SelectionRequest,
  opts: { jsEval?: JsEvalRunner } = {},
): Selection {
  const toolsets = req.toolsets ? splitList(req.toolsets) : undefined;
  const tools = req.tools ? splitList(req.tools) : undefined;
  if (req.profile !== undefined && toolsets !== undefined) {
    throw new DvergrError("USAGE", "Cannot use a profile and --toolsets together", {
      hint: "--toolsets a,b is a custom selection: leave out --profile",
    });
  }
  if (req.room !== undefined && tools === undefined) {
    throw new DvergrError("USAGE", `Cannot pin room "${req.room}" without naming its tools`, {
      hint: "Pin a connection with --room R --tools room_read,room_write",
    });
  }
  if (tools !== undefined) {
    if (req.profile !== undefined || toolsets !== undefined) {
      throw new DvergrError("USAGE", "Cannot use --tools with a profile or --toolsets", {
        hint: "--tools names exactly the tools of the connection",
      });
    }
    if (tools.length === 0) {
      throw new DvergrError("USAGE", "Cannot serve an empty --tools list", {
        hint: "Name at least one tool, e.g. --tools room_read,room_write",
      });
    }
    const known = ops.map((o) => o.name);
    const missing = tools.filter((t) => !known.includes(t));
    if (missing.length) throw unknown("tool", missing, known);
    const picked = ops.filter((o) => tools.includes(o.name));
    if (req.room !== undefined) {
      checkSlug(req.room);
      const unscoped = picked.filter((o) => !o.roomScoped).map((o) => o.name);
      if (unscoped.length) {
        throw new DvergrError(
          "USAGE",
          `Cannot pin ${unscoped.join(", ")} to room "${req.room}": ${
            unscoped.length > 1 ? "they take" : "it takes"
          } no room`,
          {
            hint: `Pin only tools with a room parameter: ${
              ops.filter((o) => o.roomScoped).map((o) => o.name).join(", ")
            }`,
          },
        );
      }
    }
    return {
      ops: picked,
      room: req.room ?? null,
      label: `tools ${picked.map((o) => o.name).join(",")}${
        req.room !== undefined ? ` in room ${req.room}` : ""
      }`,
    };
  }
  if (toolsets !== undefined) {
    const known = [...new Set(ops.map((o) => o.toolset))];
    const missing = toolsets.filter((t) => !known.includes(t));
    if (missing.length) throw unknown("toolset", missing, known);
    if (toolsets.length === 0) {
      throw new DvergrError("USAGE", "Cannot serve an empty --toolsets list", {
        hint: `Name toolsets from: ${known.join(", ")}`,
      });
    }
    return {
      ops: ops.filter((o) => toolsets.includes(o.toolset)),
      room: null,
      label: `toolsets ${toolsets.join(",")}`,
    };
  }
  const name = req.profile ?? DEFAULT_PROFILE;
  const profile = PROFILES[name];
  if (!profile) throw unknown("profile", [name], Object.keys(PROFILES));
  if (name === "code") {
    if (!opts.jsEval) {
      throw new DvergrError("USAGE", "The code profile is not available here", {
        hint: "Serve it with dvergr serve --mcp --profile code",
      });
    }
    return {
      ops: codeOps(ops.filter(PROFILES.bench.pick), opts.jsEval),
      room: null,
      label: "profile code",
    };
  }
  return { ops: ops.filter(profile.pick), room: null, label: `profile ${name}` };
}
