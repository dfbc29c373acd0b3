/**
 * One attempt in full, for people (`dvergr show`) and clients (MCP `attempt_export`): its
 * outcome and cause, verdict and checks, the files it left, the candidate's stdout/stderr
 * tail and exit status, the model transcript and tool calls, a command's world gateway
 * (its MCP calls and model requests, an agent CLI's own result), fetched pages, cost, tokens
 * and times. Built from the attempt record and its evidence blob (plain JSON as the engine
 * wrote it); every text is bounded. Pure.
 */
import type { AttemptRecord } from "./records.ts";
import { causeOf, type Outcome, OUTCOME_TEXT, outcomeOf } from "./outcome.ts";
import { formatFixed } from "./format_fixed.ts";

/** Characters kept of each captured file, tail, transcript text or page in a view. */
export const VIEW_TEXT_LIMIT = 20_000;
/** Fetched pages shown in a view (the evidence keeps up to 40). */
export const VIEW_PAGES = 10;

export interface AttemptView {
  experiment: string;
  candidate: string;
  case: string | null;
  repetition: number;
  tryNo: number;
  outcome: Outcome;
  /** One line saying why it did not pass; null when it passed. */
  cause: string | null;
  status: string;
  startedAt: string;
  elapsedMs: number;
  verdict: { reward: number; checks: Record<string, boolean> } | null;
  fault: { source: string; kind: string; message: string } | null;
  failure: { kind: string; message: string } | null;
  /** A command's exit: code, signal, output tails (null for other candidates). */
  process: {
    command: string | null;
    exitCode: number | null;
    signal: string | null;
    timedOut: boolean;
    stdoutBytes: number | null;
    stderrBytes: number | null;
    stdoutTail: string;
    stderrTail: string;
  } | null;
  /** A model's transcript: messages, tool calls and results, as the loop kept them. */
  model: {
    model: string | null;
    provider: string | null;
    stop: string | null;
    calls: number | null;
    toolCalls: number | null;
    toolErrors: number | null;
    transcript: Record<string, unknown>[];
    /** Entries the loop left out to bound the evidence. */
    omitted: number;
  } | null;
  /**
   * A command's world gateway: its MCP calls and model requests in time order (bounded),
   * why the gateway stopped it, and an agent CLI's own result (null without a gateway).
   */
  gateway: {
    events: GatewayEvent[];
    omitted: number;
    stopped: string | null;
    fault: string | null;
    upstreamProblem: string | null;
    agent: { cli: string; result: Record<string, unknown> | null } | null;
  } | null;
  /** Files under :capture the checker graded, by world path (bounded). */
  captured: Record<string, string>;
  /** Captured files skipped (too big, binary, links…) and why. */
  skipped: { path: string; reason: string }[];
  /** Pages the attempt fetched (bounded), when the bundle records them. */
  fetched: { url: string; title: string | null; chars: number; text: string }[];
  /** The attempt's web: mode, searches, requests, pages, denials (when it had a web). */
  web: AttemptRecord["web"] | null;
  /** The judge's calls and cost (when the bundle has a judge). */
  judge: AttemptRecord["judge"] | null;
  /** What the checker asked the judge and what it answered (null: not answered), bounded. */
  judged: { id: string; question: string; answer: string | null }[];
  cost: {
    billedMicros: number;
    listMicros: number;
    unpriced: boolean;
    tokens: { input: number; output: number; cacheRead: number; cacheWrite: number };
  };
  isolated: boolean;
  trust: string;
  /** The evidence blob's id (null when there is none, or it could not be read). */
  evidenceRef: string | null;
  /** The evidence blob was referenced but not found: only the record's facts are shown. */
  evidenceMissing: boolean;
  /** The attempt this record graded again (`dvergr regrade`), or null. */
  regradedFrom: NonNullable<AttemptRecord["regradedFrom"]> | null;
}

/** One MCP call or model request through an attempt's gateway. */
export type GatewayEvent =
  | { kind: "mcp"; at: number; tool: string; args: string; resultChars: number; isError: boolean }
  | {
    kind: "model";
    at: number;
    request: string;
    model: string | null;
    status: number;
    refused: string | null;
    input: number | null;
    output: number | null;
  };

/** Gateway events shown in a view. */
export const VIEW_GATEWAY_EVENTS = 200;

function gatewayOf(cand: Record<string, unknown>): AttemptView["gateway"] {
  const g = obj(cand.gateway);
  if (!g) return null;
  const mcp = (Array.isArray(g.mcpCalls) ? g.mcpCalls : []).map((c) => obj(c) ?? {});
  const model = (Array.isArray(g.modelLog) ? g.modelLog : []).map((c) => obj(c) ?? {});
  const events: GatewayEvent[] = [
    ...mcp.map((c): GatewayEvent => ({
      kind: "mcp",
      at: num(c.at) ?? 0,
      tool: str(c.tool) ?? "?",
      args: clip(JSON.stringify(c.args ?? {}), 300),
      resultChars: num(c.resultChars) ?? 0,
      isError: c.isError === true,
    })),
    ...model.map((e): GatewayEvent => {
      const u = obj(e.usage);
      return {
        kind: "model",
        at: num(e.at) ?? 0,
        request: `${str(e.method) ?? "?"} ${str(e.path) ?? "?"}`,
        model: str(e.model),
        status: num(e.status) ?? 0,
        refused: str(e.refused),
        input: num(u?.input),
        output: num(u?.output),
      };
    }),
  ].sort((a, b) => a.at - b.at);
  const agent = obj(cand.agent);
  return {
    events: events.slice(0, VIEW_GATEWAY_EVENTS),
    omitted: Math.max(0, events.length - VIEW_GATEWAY_EVENTS),
    stopped: str(g.stopped),
    fault: str(g.fault),
    upstreamProblem: str(g.upstreamProblem),
    agent: agent ? { cli: str(agent.cli) ?? "?", result: obj(agent.result) } : null,
  };
}

/** Judge questions shown in a view (a bundle's :max-requests is at most a few dozen). */
export const VIEW_JUDGED = 50;

/** The judge's questions and answers from the evidence (`{requests, answers}`). */
function judgedOf(j: Record<string, unknown> | null): AttemptView["judged"] {
  const answers = obj(j?.answers) ?? {};
  return (Array.isArray(j?.requests) ? j!.requests as unknown[] : []).slice(0, VIEW_JUDGED)
    .map((q) => obj(q) ?? {})
    .map((q) => {
      const id = str(q.id) ?? "?";
      const answer = str(answers[id]);
      return {
        id,
        question: clip(str(q.prompt) ?? "", 4000),
        answer: answer === null ? null : clip(answer, 4000),
      };
    });
}

function clip(text: string, max = VIEW_TEXT_LIMIT): string {
  return text.length <= max
    ? text
    : `${text.slice(0, max)}[… ${text.length - max} more characters]`;
}

function obj(v: unknown): Record<string, unknown> | null {
  return typeof v === "object" && v !== null && !Array.isArray(v)
    ? v as Record<string, unknown>
    : null;
}

function str(v: unknown): string | null {
  return typeof v === "string" ? v : null;
}

function num(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

/**
 * The view of an attempt. `evidence` is its evidence blob (null when it has none or it is
 * missing); `pages` the fetched pages blob (`{fetched: {url: text}, titles}`) when there is one.
 */
export function attemptView(
  r: AttemptRecord,
  evidence: unknown,
  pages: unknown = null,
): AttemptView {
  const ev = obj(evidence) ?? {};
  const cand = obj(ev.candidate) ?? {};
  const isModel = cand.kind === "model" || Array.isArray(cand.transcript);
  const isCommand = !isModel && ("exitCode" in cand || "stderrTail" in cand);
  const captured = obj(ev.captured);
  const files = obj(captured?.files) ?? {};
  const skipped = Array.isArray(captured?.skipped) ? captured!.skipped as unknown[] : [];
  const pageMap = obj(obj(pages)?.fetched) ?? {};
  const titles = obj(obj(pages)?.titles) ?? {};
  return {
    experiment: r.experimentId,
    candidate: r.candidate,
    case: r.caseId,
    repetition: r.repetition,
    tryNo: r.tryNo,
    outcome: outcomeOf(r),
    cause: causeOf(r)?.[1] ?? null,
    status: r.status,
    startedAt: r.startedAt,
    elapsedMs: r.elapsedMs,
    verdict: r.verdict ? { reward: r.verdict.reward, checks: { ...r.verdict.checks } } : null,
    fault: r.fault
      ? { source: r.fault.source, kind: r.fault.kind, message: r.fault.message }
      : null,
    failure: r.failure ?? null,
    process: isCommand
      ? {
        command: str(cand.command),
        exitCode: num(cand.exitCode),
        signal: str(cand.signal),
        timedOut: cand.timedOut === true,
        stdoutBytes: num(cand.stdoutBytes),
        stderrBytes: num(cand.stderrBytes),
        stdoutTail: clip(str(cand.stdoutTail) ?? ""),
        stderrTail: clip(str(cand.stderrTail) ?? ""),
      }
      : (r.ending && (r.ending.exitCode !== null || r.ending.signal || r.ending.stderrTail))
      ? {
        command: null,
        exitCode: r.ending.exitCode,
        signal: r.ending.signal,
        timedOut: r.status === "timeout",
        stdoutBytes: null,
        stderrBytes: null,
        stdoutTail: "",
        stderrTail: r.ending.stderrTail ?? "",
      }
      : null,
    model: isModel
      ? {
        model: str(cand.model),
        provider: str(cand.provider),
        stop: str(cand.stop),
        calls: num(cand.calls),
        toolCalls: num(cand.toolCalls),
        toolErrors: num(cand.toolErrors),
        // The loop bounds each entry (2,000 characters) and the whole (60,000).
        transcript: (Array.isArray(cand.transcript) ? cand.transcript : [])
          .map((e) => obj(e) ?? { value: e }),
        omitted: num(cand.transcriptOmitted) ?? 0,
      }
      : null,
    gateway: gatewayOf(cand),
    captured: Object.fromEntries(
      Object.entries(files).map(([p, t]) => [p, clip(typeof t === "string" ? t : String(t))]),
    ),
    skipped: skipped.map((s) => obj(s) ?? {}).map((s) => ({
      path: str(s.path) ?? "?",
      reason: str(s.reason) ?? "?",
    })),
    fetched: Object.entries(pageMap).slice(0, VIEW_PAGES).map(([url, text]) => {
      const t = typeof text === "string" ? text : "";
      return { url, title: str(titles[url]), chars: t.length, text: clip(t, 4000) };
    }),
    web: r.web ?? null,
    judge: r.judge ?? null,
    judged: judgedOf(obj(ev.judge)),
    cost: {
      billedMicros: r.billedMicros,
      listMicros: r.listMicros ?? r.billedMicros,
      unpriced: r.unpriced === true,
      tokens: { ...r.usage },
    },
    isolated: r.isolated,
    trust: r.trust,
    evidenceRef: r.evidenceRef,
    evidenceMissing: r.evidenceRef !== null && evidence === null,
    regradedFrom: r.regradedFrom ?? null,
  };
}

function money(micros: number): string {
  return "$" + formatFixed(micros / 1e6, 4);
}

function indent(text: string, by = "    "): string[] {
  return text.replace(/\s+$/, "").split("\n").map((l) => by + l);
}

function cellName(v: { candidate: string; case: string | null; repetition: number }): string {
  return `${v.candidate}${v.case === null ? "" : ` / case ${v.case}`} / repetition ${v.repetition}`;
}

/** The view as text for a terminal. */
export function attemptText(v: AttemptView): string {
  const out: string[] = [];
  out.push(`Attempt ${cellName(v)} (try ${v.tryNo}) of experiment ${v.experiment}`);
  out.push(`Outcome    ${OUTCOME_TEXT[v.outcome]}${v.cause ? `: ${v.cause}` : ""}`);
  const g = v.regradedFrom;
  if (g) {
    out.push(
      `Re-graded  from experiment ${g.experimentId} (try ${g.tryNo}): the candidate did not ` +
        `run again; judge answers ${g.judgeReused} reused, ${g.judgeAsked} asked anew`,
    );
  }
  out.push(
    `Started    ${v.startedAt}, took ${
      v.elapsedMs < 950 ? `${v.elapsedMs} ms` : `${formatFixed(v.elapsedMs / 1000, 1)} s`
    }${v.isolated ? "" : " (not isolated)"}`,
  );
  const t = v.cost.tokens;
  out.push(
    `Cost       ${
      v.cost.unpriced
        ? "unknown (the model has no prices in the registry)"
        : `${money(v.cost.listMicros)} list price, ${money(v.cost.billedMicros)} billed`
    }; tokens ${t.input} in (${t.cacheRead} cached), ${t.output} out`,
  );
  if (v.verdict) {
    out.push(`Verdict    reward ${formatFixed(v.verdict.reward, 3)} (verifier ${v.trust})`);
    for (const [k, ok] of Object.entries(v.verdict.checks)) {
      out.push(`  ${ok === true ? "pass" : "FAIL"}  :${k}`);
    }
  } else out.push("Verdict    none (the attempt faulted; a rerun tries the cell again)");
  if (v.fault) out.push(`Fault      ${v.fault.source} ${v.fault.kind}: ${v.fault.message}`);
  if (v.failure) out.push(`Failure    ${v.failure.kind}: ${v.failure.message}`);
  if (v.process) {
    const p = v.process;
    const exit = p.signal
      ? `killed by ${p.signal}`
      : p.exitCode !== null
      ? `exit status ${p.exitCode}`
      : "—";
    out.push(`Process    ${exit}${p.timedOut ? " (stopped at the time limit)" : ""}`);
    if (p.command) out.push(`  command  ${p.command}`);
    out.push(`  stdout (${p.stdoutBytes ?? "?"} bytes; the tail):`);
    out.push(...(p.stdoutTail ? indent(p.stdoutTail) : ["    (empty)"]));
    out.push(`  stderr (${p.stderrBytes ?? "?"} bytes; the tail):`);
    out.push(...(p.stderrTail ? indent(p.stderrTail) : ["    (empty)"]));
  }
  if (v.model) {
    const m = v.model;
    out.push(
      `Model      ${m.model ?? "?"} (${m.provider ?? "?"}): ${m.calls ?? 0} calls, ${
        m.toolCalls ?? 0
      } tool calls (${m.toolErrors ?? 0} errors), stopped: ${m.stop ?? "?"}`,
    );
    for (const e of m.transcript) out.push(...transcriptLines(e));
    if (m.omitted > 0) out.push(`  … ${m.omitted} more entries not kept`);
  }
  if (v.gateway) out.push(...gatewayLines(v.gateway));
  const paths = Object.keys(v.captured);
  out.push(`Files      ${paths.length === 0 ? "none captured" : `${paths.length} captured`}`);
  for (const p of paths) {
    out.push(`  ${p}`);
    out.push(...indent(v.captured[p] || "(empty)"));
  }
  for (const s of v.skipped) out.push(`  ${s.path}: not kept (${s.reason})`);
  if (v.fetched.length > 0) {
    out.push(`Fetched    ${v.fetched.length} page${v.fetched.length === 1 ? "" : "s"}`);
    for (const p of v.fetched) {
      out.push(`  ${p.url}${p.title ? ` — ${p.title}` : ""} (${p.chars} characters)`);
    }
  }
  if (v.web) {
    const d = Object.entries(v.web.denials).filter(([, n]) => (n ?? 0) > 0)
      .map(([k, n]) => `${n} ${k}`);
    out.push(
      `Web        ${v.web.mode}: ${v.web.searches} searches, ${v.web.requests} requests, ${v.web.pages} pages${
        d.length > 0 ? `; refused: ${d.join(", ")}` : ""
      }`,
    );
  }
  if (v.judge) {
    out.push(
      `Judge      ${v.judge.model}: ${v.judge.calls} calls, ${
        money(v.judge.listMicros ?? v.judge.billedMicros)
      }`,
    );
  }
  for (const q of v.judged) {
    out.push(`  asked ${q.id}: ${q.question.split("\n")[0].slice(0, 200)}`);
    out.push(`    answer: ${q.answer === null ? "none" : q.answer.split("\n")[0].slice(0, 200)}`);
  }
  if (v.evidenceMissing) out.push(`Evidence   blob ${v.evidenceRef} is missing from the home`);
  return out.join("\n") + "\n";
}

function gatewayLines(g: NonNullable<AttemptView["gateway"]>): string[] {
  const mcp = g.events.filter((e) => e.kind === "mcp").length;
  const model = g.events.filter((e) => e.kind === "model" && e.request !== "HEAD /").length;
  const notes = [
    g.stopped ? `stopped: ${g.stopped}` : "",
    g.fault ? `fault: ${g.fault}` : "",
    g.upstreamProblem ? `provider: ${g.upstreamProblem}` : "",
  ].filter((n) => n !== "");
  const lines = [
    `Gateway    ${model} model requests, ${mcp} MCP calls${
      notes.length ? `; ${notes.join("; ")}` : ""
    }`,
  ];
  for (const e of g.events) {
    const at = `${formatFixed(e.at / 1000, 1).padStart(6)} s`;
    if (e.kind === "mcp") {
      lines.push(
        `  ${at}  mcp ${e.tool} ${e.args} → ${e.resultChars} characters${
          e.isError ? " (error)" : ""
        }`,
      );
    } else {
      const tokens = e.input !== null ? ` (${e.input} in, ${e.output ?? 0} out)` : "";
      lines.push(
        `  ${at}  ${e.request}${e.model ? ` ${e.model}` : ""} → ${e.status}${
          e.refused ? ` refused: ${e.refused}` : ""
        }${tokens}`,
      );
    }
  }
  if (g.omitted > 0) lines.push(`  … ${g.omitted} more not shown`);
  if (g.agent) {
    const r = g.agent.result;
    const said = r ? str(r.result) ?? str(r.message) : null;
    lines.push(
      `  ${g.agent.cli} result: ${
        r ? JSON.stringify(r.subtype ?? obj(r.end)?.type ?? "—") : "none"
      }${said ? ` — ${said.split("\n")[0].slice(0, 200)}` : ""}`,
    );
  }
  return lines;
}

function transcriptLines(e: Record<string, unknown>): string[] {
  const role = str(e.role) ?? "?";
  const lines: string[] = [];
  const text = str(e.text);
  if (role === "tool") {
    for (const r of Array.isArray(e.results) ? e.results : []) {
      const x = obj(r) ?? {};
      lines.push(
        `  tool ${str(x.name) ?? "?"}${x.isError ? " (error)" : ""}: ${
          (str(x.content) ?? "").split("\n")[0].slice(0, 200)
        }`,
      );
    }
    return lines;
  }
  if (text) lines.push(`  ${role}: ${text.split("\n")[0].slice(0, 300)}`);
  for (const c of Array.isArray(e.toolCalls) ? e.toolCalls : []) {
    const x = obj(c) ?? {};
    lines.push(`  ${role} calls ${str(x.name) ?? "?"} ${(str(x.arguments) ?? "").slice(0, 200)}`);
  }
  if (role === "error") lines.push(`  error: ${str(e.message) ?? ""}`);
  return lines;
}
