/**
 * dvergr's agent loop for API models: a system prompt, the task as the first user message,
 * the world's tools, and turns until the model answers without calling a tool, the turn
 * limit, the attempt's time (its signal) or its budget.
 *
 * The budget counts list price (the bill for API models, the :list-price-of model's prices
 * for subscriptions), so every candidate gets the same allowance. Before each call the loop
 * prices the worst case of that call — the prompt it is about to send (the previous call's
 * prompt and answer as reported, plus what was added since at 3 characters a token; the
 * whole conversation that way on the first call), every token at the dearest input rate,
 * plus `maxTokens` of output — and stops, status "budget", when spent + worst case would
 * exceed the budget. The world is then scored as it stands.
 *
 * A provider failure (after the HTTP layer's retries) ends the attempt as a fault; a model
 * that answers badly does not: tool errors go back to it as tool results.
 */
import type {
  AttemptContext,
  CandidateFault,
  CandidateOutcome,
  Usage,
} from "../../../core/bench/candidate.ts";
import { NO_USAGE } from "../../../core/bench/candidate.ts";
import {
  addUsage,
  costMicros,
  costPico,
  formatDollars,
  type ModelPrices,
  picoPerToken,
  picoToMicros,
} from "../../../core/models/cost.ts";
import type { CallFailure, ModelProvider } from "../../../core/ports/model_provider.ts";
import type {
  ChatMessage,
  ModelTurn,
  ToolResult,
  ToolSpec,
} from "../../../core/codecs/providers/conversation.ts";
import { callWorldTool, offeredTools, type ToolWorld } from "../../../core/world_tools/registry.ts";

export const DEFAULT_SYSTEM_PROMPT =
  "You are a capable AI worker. Complete the given task thoroughly, in this room's files and data. Say briefly what you changed.";
export const DEFAULT_MAX_TURNS = 30;

/** Characters per token assumed when estimating a prompt not yet counted by the provider. */
export const CHARS_PER_TOKEN_ESTIMATE = 3;
/** Tokens added to each estimate for message framing and tool definitions' overhead. */
export const ESTIMATE_OVERHEAD_TOKENS = 100;

/** Evidence bounds: characters per text, and the transcript's total. */
export const EVIDENCE_TEXT_LIMIT = 2_000;
export const EVIDENCE_TOTAL_LIMIT = 60_000;

export interface AgentLoopOptions {
  provider: ModelProvider;
  systemPrompt: string;
  maxTurns: number;
  /** Output tokens per call. */
  maxTokens: number;
  /** What the calls are billed at. */
  billPrices: ModelPrices;
  /** List prices when they differ from the bill (subscriptions); null = the bill. */
  listPrices: ModelPrices | null;
}

type Stop = "answered" | "turn-limit" | "budget" | "timeout" | "fault";

function clip(s: string, n = EVIDENCE_TEXT_LIMIT): string {
  return s.length <= n ? s : `${s.slice(0, n)}[… ${s.length - n} more characters]`;
}

/** A bounded transcript: entries are kept until the total is spent, then only counted. */
class Transcript {
  entries: Record<string, unknown>[] = [];
  omitted = 0;
  #size = 0;

  add(entry: Record<string, unknown>): void {
    const size = JSON.stringify(entry).length;
    if (this.#size + size > EVIDENCE_TOTAL_LIMIT) {
      this.omitted++;
      return;
    }
    this.#size += size;
    this.entries.push(entry);
  }
}

function messageChars(m: ChatMessage): number {
  switch (m.role) {
    case "user":
      return m.text.length;
    case "assistant":
      return m.text.length +
        m.toolCalls.reduce((n, c) => n + c.name.length + c.rawArguments.length + c.id.length, 0);
    case "tool":
      return m.results.reduce((n, r) => n + r.content.length + r.callId.length, 0);
  }
}

/**
 * A provider failure as a fault: the candidate ran, so it is the provider's. A rejected key
 * (401, 403) is permanent: trying again in the same run would only be rejected again.
 */
export function providerFault(failure: CallFailure, status?: number): CandidateFault {
  if (status === 401 || status === 403) {
    return { source: "provider", kind: "auth", permanent: true };
  }
  if (failure === "malformed") return { source: "provider", kind: "malformed-response" };
  return { source: "provider", kind: failure };
}

function tokensFor(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN_ESTIMATE) + ESTIMATE_OVERHEAD_TOKENS;
}

/** One attempt's loop: what it offers, what it has said and spent, and why it stopped. */
interface Loop {
  ctx: AttemptContext;
  opts: AgentLoopOptions;
  started: number;
  deadline: number;
  toolWorld: ToolWorld;
  tools: ToolSpec[];
  budgetPrices: ModelPrices;
  budgetPico: bigint;
  dearestInput: bigint;
  outputPico: bigint;
  /** The system prompt's and the tool definitions' characters, sent with every call. */
  fixedChars: number;
  messages: ChatMessage[];
  transcript: Transcript;
  usage: Usage;
  calls: number;
  tries: number;
  usageMissing: number;
  reasoningTokens: number;
  toolErrors: number;
  toolCallsMade: number;
  /** What the previous call's prompt and answer came to (null before the first call or when unreported). */
  reportedContext: number | null;
  countedMessages: number;
  lastWorstMicros: number;
  stop: Stop;
  message?: string;
  fault?: CandidateFault;
}

function startLoop(ctx: AttemptContext, opts: AgentLoopOptions): Loop {
  const started = Date.now();
  const toolWorld: ToolWorld = {
    files: ctx.world,
    profile: ctx.profile,
    writable: ctx.writable,
    web: ctx.web ?? null,
  };
  const tools: ToolSpec[] = offeredTools(toolWorld).map((t) => ({
    name: t.name,
    description: t.description,
    parameters: t.inputSchema as unknown as Record<string, unknown>,
  }));
  const budgetPrices = opts.listPrices ?? opts.billPrices;
  const transcript = new Transcript();
  transcript.add({ role: "user", text: clip(ctx.task) });
  return {
    ctx,
    opts,
    started,
    deadline: started + ctx.timeoutMs,
    toolWorld,
    tools,
    budgetPrices,
    budgetPico: BigInt(Math.max(0, Math.floor(ctx.budgetMicros))) * 1_000_000n,
    dearestInput: [budgetPrices.input, budgetPrices.cacheRead, budgetPrices.cacheWrite]
      .map(picoPerToken).reduce((a, b) => (a > b ? a : b)),
    outputPico: picoPerToken(budgetPrices.output),
    fixedChars: opts.systemPrompt.length + JSON.stringify(tools).length,
    messages: [{ role: "user", text: ctx.task }],
    transcript,
    usage: { ...NO_USAGE },
    calls: 0,
    tries: 0,
    usageMissing: 0,
    reasoningTokens: 0,
    toolErrors: 0,
    toolCallsMade: 0,
    reportedContext: null,
    countedMessages: 0,
    lastWorstMicros: 0,
    stop: "turn-limit",
  };
}

/** Stops the loop (true) when the time is up or the next call's worst case passes the budget. */
function stopsBeforeCall(l: Loop): boolean {
  if (l.ctx.signal.aborted || Date.now() >= l.deadline) {
    l.stop = "timeout";
    l.message =
      `stopped by the attempt's time limit (${l.ctx.timeoutMs} ms) after ${l.calls} model calls`;
    return true;
  }
  const chars = (ms: ChatMessage[]) => ms.reduce((n, m) => n + messageChars(m), 0);
  const estInput = l.reportedContext === null
    ? tokensFor(l.fixedChars + chars(l.messages))
    : l.reportedContext + tokensFor(chars(l.messages.slice(l.countedMessages)));
  const worstPico = BigInt(estInput) * l.dearestInput + BigInt(l.opts.maxTokens) * l.outputPico;
  const spentPico = costPico(l.usage, l.budgetPrices);
  l.lastWorstMicros = picoToMicros(worstPico);
  if (spentPico + worstPico <= l.budgetPico) return false;
  l.stop = "budget";
  l.message =
    `stopped by budget: ${formatDollars(picoToMicros(spentPico))} spent of ${
      formatDollars(l.ctx.budgetMicros)
    }, ` +
    `and the next call could cost up to ${
      formatDollars(l.lastWorstMicros)
    } (about ${estInput} input and ${l.opts.maxTokens} output tokens)`;
  return true;
}

/** Asks the model once and records its turn; null when the call failed (the loop has stopped). */
async function callModel(l: Loop): Promise<ModelTurn | null> {
  const res = await l.opts.provider.complete({
    system: l.opts.systemPrompt,
    messages: l.messages,
    tools: l.tools,
    maxTokens: l.opts.maxTokens,
    signal: l.ctx.signal,
    deadline: l.deadline,
  });
  l.tries += res.tries;
  if (!res.ok) {
    l.stop = res.failure === "aborted" ? "timeout" : "fault";
    l.message = res.message;
    if (l.stop === "fault") l.fault = providerFault(res.failure, res.status);
    l.transcript.add({
      role: "error",
      failure: res.failure,
      message: clip(res.message),
      ...(res.status ? { status: res.status } : {}),
    });
    return null;
  }
  l.calls++;
  const turn = res.turn;
  l.usage = addUsage(l.usage, turn.usage);
  l.reasoningTokens += turn.reasoningTokens;
  if (turn.usageReported) {
    l.reportedContext = turn.usage.input + turn.usage.output;
  } else {
    l.usageMissing++;
    l.reportedContext = null;
  }
  l.messages.push({ role: "assistant", text: turn.text, toolCalls: turn.toolCalls });
  l.countedMessages = l.messages.length;
  l.transcript.add({
    role: "assistant",
    turn: l.calls,
    text: clip(turn.text),
    toolCalls: turn.toolCalls.map((c) => ({
      id: c.id,
      name: c.name,
      arguments: clip(c.rawArguments),
    })),
    stopReason: turn.stopReason,
    usage: turn.usage,
    ...(res.tries > 1 ? { tries: res.tries } : {}),
  });
  return turn;
}

/** Runs the turn's tool calls in the world and gives their results back to the model. */
async function runToolCalls(l: Loop, turn: ModelTurn): Promise<void> {
  const results: ToolResult[] = [];
  for (const call of turn.toolCalls) {
    l.toolCallsMade++;
    const out = await callWorldTool(call.name, call.args, l.toolWorld, {
      argsProblem: call.argsProblem,
      signal: l.ctx.signal,
    });
    const r: ToolResult = { callId: call.id, name: call.name, ...out };
    if (r.isError) l.toolErrors++;
    results.push(r);
  }
  l.messages.push({ role: "tool", results });
  l.transcript.add({
    role: "tool",
    results: results.map((r) => ({
      name: r.name,
      content: clip(r.content),
      ...(r.isError ? { isError: true } : {}),
    })),
  });
}

/** Runs the loop in the attempt's world; never throws for the model's or provider's doing. */
export async function runAgentLoop(
  ctx: AttemptContext,
  opts: AgentLoopOptions,
): Promise<CandidateOutcome> {
  const l = startLoop(ctx, opts);
  while (l.calls < opts.maxTurns) {
    if (stopsBeforeCall(l)) break;
    const turn = await callModel(l);
    if (turn === null) break;
    if (turn.toolCalls.length === 0) {
      l.stop = "answered";
      break;
    }
    await runToolCalls(l, turn);
    if (costPico(l.usage, l.budgetPrices) > l.budgetPico) {
      l.stop = "budget";
      l.message = `stopped by budget: ${
        formatDollars(costMicros(l.usage, l.budgetPrices))
      } spent of ${formatDollars(ctx.budgetMicros)}`;
      break;
    }
  }
  if (l.stop === "turn-limit") {
    l.message = `stopped at the turn limit (${opts.maxTurns} model calls)`;
  }
  return outcomeOf(l);
}

/** The attempt's outcome: status, money, and the loop's evidence with its transcript. */
function outcomeOf(l: Loop): CandidateOutcome {
  const { ctx, opts, usage } = l;
  const status = l.stop === "answered" || l.stop === "turn-limit" ? "completed" : l.stop;
  return {
    status,
    ...(l.message === undefined ? {} : { message: l.message }),
    ...(l.fault === undefined ? {} : { fault: l.fault }),
    usage,
    billedMicros: costMicros(usage, opts.billPrices),
    listMicros: opts.listPrices === null ? null : costMicros(usage, opts.listPrices),
    isolated: true,
    evidence: {
      kind: "model",
      provider: opts.provider.kind,
      model: opts.provider.model,
      baseUrl: opts.provider.baseUrl,
      stop: l.stop,
      calls: l.calls,
      httpTries: l.tries,
      toolCalls: l.toolCallsMade,
      toolErrors: l.toolErrors,
      elapsedMs: Date.now() - l.started,
      budget: {
        budgetMicros: ctx.budgetMicros,
        spentMicros: costMicros(usage, l.budgetPrices),
        lastWorstCaseMicros: l.lastWorstMicros,
        countsListPrice: opts.listPrices !== null,
      },
      ...(l.reasoningTokens > 0 ? { reasoningTokens: l.reasoningTokens } : {}),
      ...(l.usageMissing > 0 ? { callsWithoutUsage: l.usageMissing } : {}),
      transcript: l.transcript.entries,
      ...(l.transcript.omitted > 0 ? { transcriptOmitted: l.transcript.omitted } : {}),
    },
  };
}
