import type { Command } from "./context.ts";

/**
 * Every subcommand, loaded lazily so `dvergr --help` and small commands do not pay
 * for the imports of big ones (the MCP SDK alone costs ~250 ms).
 */
export const COMMANDS: Record<string, { summary: string; load: () => Promise<Command> }> = {
  check: {
    summary: "shape-check a bundle; with --answer, grade an answer",
    load: () => import("./check.ts"),
  },
  calibrate: {
    summary: "prove a bundle's checker grades right (exit 1 when it does not)",
    load: () => import("./calibrate.ts"),
  },
  cases: {
    summary: "turn a table of historical cases into a certified dataset bundle",
    load: () => import("./cases.ts"),
  },
};
