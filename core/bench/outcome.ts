/**
 * What happened in an attempt, as one word, and why attempts went wrong. Every attempt has
 * exactly one outcome, derived from its record alone: passed, failed (graded, some check
 * false), crashed (its exit status), timed out, stopped by budget, or fault (it could not
 * run, its provider failed, the checker faulted, the host failed). Pure.
 */
import type { AttemptRecord } from "./records.ts";

export type Outcome = "passed" | "failed" | "crashed" | "timed-out" | "budget" | "fault";

/** Every outcome, in the order reports list them. */
export const OUTCOMES: readonly Outcome[] = [
  "passed",
  "failed",
  "crashed",
  "timed-out",
  "budget",
  "fault",
];

/** Outcomes as people read them. */
export const OUTCOME_TEXT: Record<Outcome, string> = {
  passed: "passed",
  failed: "failed",
  crashed: "crashed",
  "timed-out": "timed out",
  budget: "stopped by budget",
  fault: "fault",
};

/** The one outcome of an attempt. */
export function outcomeOf(r: AttemptRecord): Outcome {
  if (r.verdict === null) return "fault";
  if (r.status === "crashed") return "crashed";
  if (r.status === "timeout") return "timed-out";
  if (r.status === "budget") return "budget";
  return r.passed ? "passed" : "failed";
}

export type OutcomeCounts = Record<Outcome, number>;

/** How many attempts had each outcome (every outcome present, zeros included). */
export function countOutcomes(records: readonly AttemptRecord[]): OutcomeCounts {
  const counts = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as OutcomeCounts;
  for (const r of records) counts[outcomeOf(r)]++;
  return counts;
}

/** Outcome counts as text, nonzero ones only: "3 passed, 1 crashed". */
export function outcomeCountsText(counts: OutcomeCounts): string {
  const parts = OUTCOMES.filter((o) => counts[o] > 0).map((o) => `${counts[o]} ${OUTCOME_TEXT[o]}`);
  return parts.length > 0 ? parts.join(", ") : "none";
}

/** One attempt standing for its cause. */
export interface CauseExample {
  caseId: string | null;
  repetition: number;
  exitCode: number | null;
  signal: string | null;
  /** The last lines of the candidate's stderr, when it was a command that wrote some. */
  stderrTail: string | null;
  /** The fault's reason or the outcome's message. */
  message: string | null;
  elapsedMs: number;
  isolated: boolean;
}

/** A distinct reason attempts of one candidate did not pass, with how many it covers. */
export interface FailureCause {
  outcome: Outcome;
  /** One line that says what happened, e.g. `exit status 2: sh: 0: cannot open a.sh: No such file`. */
  cause: string;
  count: number;
  example: CauseExample;
}

/** Ids, hashes and world directories vary between attempts with the same cause. */
function normalise(text: string): string {
  return text
    .replace(/\/\S*\/worlds\/\S+/g, "<world>")
    .replace(/\b[0-9a-f]{8,}(-[0-9a-f]{4,})*\b/gi, "…")
    .trim();
}

function lastLine(text: string | null | undefined): string {
  if (!text) return "";
  const lines = text.split("\n").map((l) => l.trim()).filter((l) => l !== "");
  return lines[lines.length - 1] ?? "";
}

function firstLine(text: string | null | undefined): string {
  return (text ?? "").split("\n").map((l) => l.trim()).find((l) => l !== "") ?? "";
}

function exitText(r: AttemptRecord): string {
  const e = r.ending;
  if (e?.signal) return `killed by ${e.signal}`;
  if (e && e.exitCode !== null) return `exit status ${e.exitCode}`;
  // Records written before endings were kept: the message says it ("… ended with exit status 2").
  const m = /ended with (exit status \d+|signal \w+)/.exec(e?.message ?? "");
  return m ? m[1] : "ended abnormally";
}

/** The cause of an attempt that did not pass, as [grouping key, one-line text]; null when it passed. */
export function causeOf(r: AttemptRecord): [string, string] | null {
  const outcome = outcomeOf(r);
  switch (outcome) {
    case "passed":
      return null;
    case "failed": {
      if (r.failure) {
        const text = `${r.failure.kind}: ${firstLine(r.failure.message)}`;
        return [`failed|${normalise(text)}`, text];
      }
      const failed = Object.entries(r.verdict?.checks ?? {})
        .filter(([, ok]) => ok !== true).map(([k]) => k).sort();
      const text = failed.length > 0
        ? `checks failed: ${failed.map((k) => `:${k}`).join(" ")}`
        : "reward below a pass";
      return [`failed|${text}`, text];
    }
    case "crashed": {
      // Going over a resource limit or the capture's entries, a shell that could not run
      // what the command named, a supervisor stopped before the files were read back, a
      // request for a model not the attempt's, or a provider that refused the attempt's
      // requests over its share, is the cause itself, whatever the exit status was.
      const limit = firstLine(r.ending?.message);
      if (
        / went over its | the shell could not run it | wrote more than [\d,]+ entries | stopped the sandbox's supervisor |^Refused a model request: |^Over its share of the model provider: /
          .test(limit)
      ) {
        const text = limit.replace(/^"[^"]*" /, "");
        return [`crashed|${normalise(text)}`, text];
      }
      const how = exitText(r);
      const line = lastLine(r.ending?.stderrTail);
      const text = line ? `${how}: ${line}` : how;
      return [`crashed|${normalise(text)}`, text];
    }
    case "timed-out": {
      const text = firstLine(r.ending?.message) || "the time limit was reached";
      return [`timed-out|${normalise(text.replace(/\d+/g, "N"))}`, text];
    }
    case "budget":
      // Amounts differ per attempt; the cause is the same.
      return ["budget|", firstLine(r.ending?.message) || "stopped by budget"];
    case "fault": {
      const f = r.fault;
      const head = f ? `${f.source} ${f.kind}` : "fault";
      const why = firstLine(f?.message);
      const text = why ? `${head}: ${why}` : head;
      return [`fault|${normalise(text)}`, text];
    }
  }
}

/** What a failure cause shows of the attempt standing for it. */
export function exampleOf(r: AttemptRecord): CauseExample {
  return {
    caseId: r.caseId,
    repetition: r.repetition,
    exitCode: r.ending?.exitCode ?? null,
    signal: r.ending?.signal ?? null,
    stderrTail: r.ending?.stderrTail ?? null,
    message: r.fault?.message ?? r.ending?.message ?? null,
    elapsedMs: r.elapsedMs,
    isolated: r.isolated,
  };
}

/**
 * Counts the distinct causes of attempts that did not pass as they come, keeping each
 * cause's earliest attempt (by `before` over the positions given) as its example: the
 * causes of many attempts without holding them.
 */
export class CauseTallies<P> {
  private readonly byKey = new Map<string, FailureCause & { at: P }>();
  constructor(private readonly before: (a: P, b: P) => boolean) {}

  /** Counts `r` (nothing when it passed); `at` is its position. */
  add(r: AttemptRecord, at: P): void {
    const c = causeOf(r);
    if (c === null) return;
    const [key, text] = c;
    const seen = this.byKey.get(key);
    if (!seen) {
      this.byKey.set(key, {
        outcome: outcomeOf(r),
        cause: text,
        count: 1,
        example: exampleOf(r),
        at,
      });
    } else {
      seen.count++;
      if (this.before(at, seen.at)) {
        seen.cause = text;
        seen.example = exampleOf(r);
        seen.at = at;
      }
    }
  }

  /** The causes, most frequent first (ties: the earliest example first). */
  causes(): FailureCause[] {
    const pos = (a: P, b: P) => (this.before(a, b) ? -1 : this.before(b, a) ? 1 : 0);
    return [...this.byKey.values()]
      .sort((a, b) => b.count - a.count || pos(a.at, b.at))
      .map(({ at: _at, ...c }) => c);
  }
}

/**
 * The distinct causes among `records` (one candidate's latest tries), most frequent first
 * (ties: the order they first occur), each with its count and its first attempt as example.
 */
export function failureCauses(records: readonly AttemptRecord[]): FailureCause[] {
  const tallies = new CauseTallies<number>((a, b) => a < b);
  records.forEach((r, i) => tallies.add(r, i));
  return tallies.causes();
}

/** A candidate none of whose attempts ran properly: every one crashed or faulted. */
export interface BrokenCandidate {
  candidate: string;
  attempts: number;
  /** "crashed", "faulted", or "crashed or faulted". */
  how: string;
  /** The most frequent cause. */
  cause: FailureCause;
  hint: string;
}

/** A hint for a cause: what to do about the most common ways an agent cannot start. */
export function causeHint(cause: FailureCause): string {
  const text = `${cause.cause}\n${cause.example.stderrTail ?? ""}\n${cause.example.message ?? ""}`;
  const notFound = /exit 127\b|exit status 127\b|: not found\b|command not found/i.test(text);
  if (notFound) {
    return cause.example.isolated
      ? "The command was not found inside the sandbox, which has the system's /usr, /bin and " +
        "/lib and the world: use a program installed there, or --mount the directory that " +
        "holds it and call it by its absolute path"
      : "The command was not found on PATH: call it by its absolute path";
  }
  const missing = /no such file|cannot open|can't open|ENOENT/i.test(text);
  if (missing && cause.example.isolated) {
    return "Under bubblewrap the agent sees only the world's directories and the system, and " +
      "starts in the world's root: --mount the agent's directory (read-only at the same path) " +
      'and name the script by its absolute path inside it, e.g. --mount "$PWD" ' +
      '--candidate "mine=cmd:sh $PWD/my_agent.sh"';
  }
  if (missing) {
    return "Give the agent's command with an absolute path: it runs in the world directory";
  }
  if (cause.outcome === "fault" && /provider auth/.test(cause.cause)) {
    return "Check the API key the model's provider rejected";
  }
  return "`dvergr show` shows an attempt in full (its stderr, exit status and files)";
}

/**
 * Candidates every one of whose attempts crashed or faulted (at least one attempt), with the
 * most frequent cause and a hint. `byCandidate` holds each candidate's latest tries.
 */
export function brokenCandidates(
  byCandidate: ReadonlyMap<string, readonly AttemptRecord[]>,
): BrokenCandidate[] {
  return [...byCandidate].flatMap(([candidate, records]) => {
    const b = brokenCandidate(candidate, countOutcomes(records), () => failureCauses(records));
    return b ? [b] : [];
  });
}

/**
 * The candidate as a broken one when every one of its attempts (at least one) crashed or
 * faulted, from its outcome counts and its causes (asked for only then); else null.
 */
export function brokenCandidate(
  candidate: string,
  counts: OutcomeCounts,
  causes: () => FailureCause[],
): BrokenCandidate | null {
  const outcomes = OUTCOMES.filter((o) => counts[o] > 0);
  if (outcomes.length === 0) return null;
  if (outcomes.some((o) => o !== "crashed" && o !== "fault")) return null;
  const cause = causes()[0];
  const how = outcomes.length === 2
    ? "crashed or faulted"
    : outcomes.includes("crashed")
    ? "crashed"
    : "faulted";
  const attempts = outcomes.reduce((n, o) => n + counts[o], 0);
  return { candidate, attempts, how, cause, hint: causeHint(cause) };
}

/** The one line the CLI prints for a broken candidate. */
export function brokenLine(b: BrokenCandidate): string {
  const every = b.attempts === 1 ? "its only attempt" : `every attempt (${b.attempts})`;
  return `${b.candidate}: ${every} ${b.how}; first cause: ${b.cause.cause}. Hint: ${b.hint}`;
}
