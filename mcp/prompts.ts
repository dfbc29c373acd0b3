/**
 * MCP prompts: the three things a user asks an assistant to do with dvergr, as messages that
 * lead it through the tools: author a bundle from a use case, benchmark a bundle, read a
 * report. Each names the tools it needs; a prompt is offered only when the connection has
 * them. Arguments are completed (completion/complete, completions.ts).
 */
import { INVALID_PARAMS, ProtocolError } from "./protocol_error.ts";

export interface PromptArgument {
  name: string;
  description: string;
  required: boolean;
}

export interface PromptDefinition {
  name: string;
  title: string;
  description: string;
  arguments: PromptArgument[];
}

interface Prompt extends PromptDefinition {
  /** The tools the prompt's steps call (it is listed only when the connection has them). */
  needs: string[];
  text(args: Record<string, string>): string;
}

const PROMPTS: Prompt[] = [
  {
    name: "author_bundle",
    title: "Author a bundle from a use case",
    description: "Turn a use case (and, when there is one, a table of past cases in a room) " +
      "into a workflow bundle that checks and calibrates.",
    arguments: [
      {
        name: "use_case",
        description: "What the workflow should do, in a few sentences",
        required: true,
      },
      { name: "room", description: "The room to write the bundle into", required: true },
      { name: "bundle", description: "The bundle's name (workflows/<bundle>/)", required: false },
      {
        name: "table",
        description: "A table of past cases in the room (e.g. data/cases.csv), if there is one",
        required: false,
      },
    ],
    needs: ["room_create", "room_write", "catalog_check", "catalog_calibrate"],
    text: (a) => {
      const name = a.bundle || "<a short kebab-case name>";
      return [
        `Build a dvergr workflow bundle for this use case:\n\n${a.use_case}\n`,
        `Work in room "${a.room}" (room_create {room: "${a.room}"} if it does not exist yet).`,
        a.table
          ? `Its past cases are in ${a.table}: read a few rows with room_read, then build a ` +
            `case pack with catalog_cases {room: "${a.room}", name: "${name}", table: ` +
            `"${a.table}", spec: "{:id \\"…\\" :inputs [\\"…\\"] :expected {\\"…\\" {:rule :exact}}}"}` +
            " (rules: exact, ci, number, set, date) and say which rows were excluded and why."
          : `Write the bundle with room_write under workflows/${name}/: workflow.edn (:title, ` +
            ":capture), task.md, checker.js (export function check({files, gold}) returning " +
            "{checks, reward}), fixtures, gold, and calibration.edn with a :reference answer and " +
            ":damaged variants naming the checks each must lose.",
        `Then run catalog_check {room: "${a.room}", name: "${name}"} and fix every problem it ` +
        "names, and catalog_calibrate (auto: true) until ok is true: the reference passes every " +
        "check, each damaged variant loses what it damages, and no mechanical damage scores " +
        "within 0.2 of the reference.",
        "Finish with what the bundle checks, what it does not, and the calibration's margin.",
      ].join("\n\n");
    },
  },
  {
    name: "benchmark_bundle",
    title: "Benchmark a bundle",
    description: "Benchmark candidates on a room's bundle, wait for the job, and summarize " +
      "the leaderboard with its intervals and what went wrong.",
    arguments: [
      { name: "room", description: "The room of the bundle", required: true },
      { name: "bundle", description: "The bundle's name (workflows/<bundle>/)", required: true },
      {
        name: "candidates",
        description: "Candidates, comma-separated (builtin:reference, cmd:NAME, model ids…)",
        required: false,
      },
    ],
    needs: ["catalog_benchmark", "job_status", "scorecard_detail"],
    text: (a) => {
      const candidates = (a.candidates || "builtin:reference,builtin:noop").split(",")
        .map((c) => c.trim()).filter(Boolean);
      return [
        `Benchmark bundle "${a.bundle}" of room "${a.room}".`,
        `Call catalog_benchmark {room: "${a.room}", name: "${a.bundle}", candidates: ${
          JSON.stringify(candidates)
        }, repetitions: 3}. It returns a job and the experiment id at once.`,
        "Poll job_status {job, wait_ms: 25000} until its status is not running (tell me the " +
        "progress meanwhile).",
        `Then read scorecard_detail {room: "${a.room}", experiment} and report: each ` +
        "candidate's reward and pass rate with their 95% intervals, its cost per pass, which " +
        "differences against the baseline are real (the paired comparison's interval " +
        "excludes 0) and which are not, and the broken candidates and flagged cases the " +
        "job's result names. Never call a difference real when its interval includes 0.",
      ].join("\n\n");
    },
  },
  {
    name: "read_report",
    title: "Read an experiment's report",
    description: "Read an experiment's report and explain what it found: who wins, by how " +
      "much, at what cost, and why attempts failed.",
    arguments: [
      { name: "room", description: "The room of the experiment", required: true },
      { name: "experiment", description: "The experiment id (or a unique prefix)", required: true },
    ],
    needs: ["experiment_report"],
    text: (a) =>
      [
        `Read the report of experiment ${a.experiment} in room "${a.room}": ` +
        `experiment_report {room: "${a.room}", experiment: "${a.experiment}"}, and the next ` +
        "pages while nextOffset is not null.",
        "Explain: the leaderboard (reward and pass rate with their intervals; an overlap " +
        "means no winner yet), the cost/reward frontier, the paired comparisons against the " +
        "baseline, the checks that fail most and the failure causes with their examples, and " +
        "the cases the item analysis flags. For one attempt in full, use attempt_export " +
        "{room, experiment, candidate, case, repetition}.",
        "End with what to do next: more repetitions where intervals overlap, a fix to the " +
        "bundle where a check is brittle, a candidate to drop.",
      ].join("\n\n"),
  },
];

/** The prompts a connection with these tools offers. */
export function promptsFor(tools: string[]): PromptDefinition[] {
  const have = new Set(tools);
  return PROMPTS.filter((p) => p.needs.every((t) => have.has(t))).map((p) => ({
    name: p.name,
    title: p.title,
    description: p.description,
    arguments: p.arguments,
  }));
}

/** prompts/get: the prompt's messages, or -32602 for an unknown prompt or a missing argument. */
export function getPrompt(
  tools: string[],
  name: string,
  args: Record<string, unknown>,
): { description: string; messages: { role: "user"; content: { type: "text"; text: string } }[] } {
  const offered = new Set(promptsFor(tools).map((p) => p.name));
  const p = PROMPTS.find((x) => x.name === name && offered.has(x.name));
  if (!p) {
    throw new ProtocolError(
      INVALID_PARAMS,
      `Unknown prompt "${name}" (this connection has: ${[...offered].join(", ") || "none"})`,
    );
  }
  const values: Record<string, string> = {};
  for (const a of p.arguments) {
    const v = args[a.name];
    if (v !== undefined && typeof v !== "string") {
      throw new ProtocolError(INVALID_PARAMS, `Prompt ${name}: argument ${a.name} must be text`);
    }
    if (a.required && (v === undefined || v.trim() === "")) {
      throw new ProtocolError(INVALID_PARAMS, `Prompt ${name} needs the argument ${a.name}`);
    }
    values[a.name] = (v ?? "").trim();
  }
  const unknown = Object.keys(args).filter((k) => !p.arguments.some((a) => a.name === k));
  if (unknown.length > 0) {
    throw new ProtocolError(
      INVALID_PARAMS,
      `Prompt ${name} takes ${p.arguments.map((a) => a.name).join(", ")}, not ${
        unknown.join(", ")
      }`,
    );
  }
  return {
    description: p.description,
    messages: [{ role: "user", content: { type: "text", text: p.text(values) } }],
  };
}
