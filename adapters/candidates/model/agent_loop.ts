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

/** Runs the loop in the attempt's world; never throws for the model's or provider's doing. */
export async function runAgentLoop(
  ctx: AttemptContext,
  opts: AgentLoopOptions,
): Promise<CandidateOutcome> {
  const started = Date.now();
  const deadline = started + ctx.timeoutMs;
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
  const budgetPico = BigInt(Math.max(0, Math.floor(ctx.budgetMicros))) * 1_000_000n;
  const dearestInput = [budgetPrices.input, budgetPrices.cacheRead, budgetPrices.cacheWrite]
    .map(picoPerToken).reduce((a, b) => (a > b ? a : b));
  const outputPico = picoPerToken(budgetPrices.output);

  const messages: ChatMessage[] = [{ role: "user", text: ctx.task }];
  const transcript = new Transcript();
  transcript.add({ role: "user", text: clip(ctx.task) });
  let usage: Usage = { ...NO_USAGE };
  let calls = 0;
  let tries = 0;
  let usageMissing = 0;
  let reasoningTokens = 0;
  let toolErrors = 0;
  let toolCallsMade = 0;
  // What the previous call's prompt and answer came to (null before the first call or when unreported).
  let reportedContext: number | null = null;
  let countedMessages = 0;
  let lastWorstMicros = 0;
  let stop: Stop = "turn-limit";
  let message: string | undefined;
  let fault: CandidateFault | undefined;

  const fixedChars = opts.systemPrompt.length + JSON.stringify(tools).length;

  while (calls < opts.maxTurns) {
    if (ctx.signal.aborted || Date.now() >= deadline) {
      stop = "timeout";
      message =
        `stopped by the attempt's time limit (${ctx.timeoutMs} ms) after ${calls} model calls`;
      break;
    }
    const newChars = messages.slice(countedMessages).reduce((n, m) => n + messageChars(m), 0);
    const estInput = reportedContext === null
      ? tokensFor(fixedChars + messages.reduce((n, m) => n + messageChars(m), 0))
      : reportedContext + tokensFor(newChars);
    const worstPico = BigInt(estInput) * dearestInput + BigInt(opts.maxTokens) * outputPico;
    const spentPico = costPico(usage, budgetPrices);
    lastWorstMicros = picoToMicros(worstPico);
    if (spentPico + worstPico > budgetPico) {
      stop = "budget";
      message =
        `stopped by budget: ${formatDollars(picoToMicros(spentPico))} spent of ${
          formatDollars(ctx.budgetMicros)
        }, ` +
        `and the next call could cost up to ${
          formatDollars(lastWorstMicros)
        } (about ${estInput} input and ${opts.maxTokens} output tokens)`;
      break;
    }

    const res = await opts.provider.complete({
      system: opts.systemPrompt,
      messages,
      tools,
      maxTokens: opts.maxTokens,
      signal: ctx.signal,
      deadline,
    });
    tries += res.tries;
    if (!res.ok) {
      stop = res.failure === "aborted" ? "timeout" : "fault";
      message = res.message;
      if (stop === "fault") fault = providerFault(res.failure, res.status);
      transcript.add({
        role: "error",
        failure: res.failure,
        message: clip(res.message),
        ...(res.status ? { status: res.status } : {}),
      });
      break;
    }
    calls++;
    const turn = res.turn;
    usage = addUsage(usage, turn.usage);
    reasoningTokens += turn.reasoningTokens;
    if (turn.usageReported) {
      reportedContext = turn.usage.input + turn.usage.output;
    } else {
      usageMissing++;
      reportedContext = null;
    }
    messages.push({ role: "assistant", text: turn.text, toolCalls: turn.toolCalls });
    countedMessages = messages.length;
    transcript.add({
      role: "assistant",
      turn: calls,
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

    if (turn.toolCalls.length === 0) {
      stop = "answered";
      break;
    }
    const results: ToolResult[] = [];
    for (const call of turn.toolCalls) {
      toolCallsMade++;
      const out = await callWorldTool(call.name, call.args, toolWorld, {
        argsProblem: call.argsProblem,
        signal: ctx.signal,
      });
      const r: ToolResult = { callId: call.id, name: call.name, ...out };
      if (r.isError) toolErrors++;
      results.push(r);
    }
    messages.push({ role: "tool", results });
    transcript.add({
      role: "tool",
      results: results.map((r) => ({
        name: r.name,
        content: clip(r.content),
        ...(r.isError ? { isError: true } : {}),
      })),
    });
    if (costPico(usage, budgetPrices) > budgetPico) {
      stop = "budget";
      message = `stopped by budget: ${formatDollars(costMicros(usage, budgetPrices))} spent of ${
        formatDollars(ctx.budgetMicros)
      }`;
      break;
    }
  }
  if (stop === "turn-limit") message = `stopped at the turn limit (${opts.maxTurns} model calls)`;

  const billedMicros = costMicros(usage, opts.billPrices);
  const listMicros = opts.listPrices === null ? null : costMicros(usage, opts.listPrices);
  const status = stop === "answered" || stop === "turn-limit" ? "completed" : stop;
  return {
    status,
    ...(message === undefined ? {} : { message }),
    ...(fault === undefined ? {} : { fault }),
    usage,
    billedMicros,
    listMicros,
    isolated: true,
    evidence: {
      kind: "model",
      provider: opts.provider.kind,
      model: opts.provider.model,
      baseUrl: opts.provider.baseUrl,
      stop,
      calls,
      httpTries: tries,
      toolCalls: toolCallsMade,
      toolErrors,
      elapsedMs: Date.now() - started,
      budget: {
        budgetMicros: ctx.budgetMicros,
        spentMicros: costMicros(usage, budgetPrices),
        lastWorstCaseMicros: lastWorstMicros,
        countsListPrice: opts.listPrices !== null,
      },
      ...(reasoningTokens > 0 ? { reasoningTokens } : {}),
      ...(usageMissing > 0 ? { callsWithoutUsage: usageMissing } : {}),
      transcript: transcript.entries,
      ...(transcript.omitted > 0 ? { transcriptOmitted: transcript.omitted } : {}),
    },
  };
}
