/**
 * The model gateway's account of one attempt's money and requests, exact in picodollars.
 *
 * A request is forwarded only once it holds a reservation of its worst case: its output
 * tokens (what it asks for, at most) at the output price plus its input (an upper bound
 * estimated from its size) at the dearest input price. Requests in flight hold their
 * reservations at once, so however many run in parallel, what is spent plus what is held
 * never passes the budget. When a response ends its metered usage replaces the hold; a
 * response that ended without reporting usage, or was cut off, is charged its hold (or its
 * usage, when that is more). The request cap counts requests when they are reserved. The
 * provider's own tools (web search, web fetch: provider_tools.ts) add their fees: reserved for
 * every use a request allows, charged for every use metered.
 *
 * Permissions: none.
 */
import type { Usage } from "../../core/bench/candidate.ts";
import { NO_USAGE } from "../../core/bench/candidate.ts";
import {
  addUsage,
  costPico,
  formatDollars,
  type ModelPrices,
  picoPerToken,
  picoToMicros,
} from "../../core/models/cost.ts";
import { addToolUses, feesPico, NO_TOOL_FEES, type ToolFees } from "./provider_tools.ts";
import { NO_TOOL_USES, type ToolUses } from "./usage_meter.ts";

/** A price pair: what a call is billed and what it costs at list price. */
export interface Prices {
  bill: ModelPrices;
  list: ModelPrices;
}

/** The most a request can cost: its tokens at most, and its provider-side tools' uses. */
export interface WorstCase {
  inputTokens: number;
  outputTokens: number;
  /** Uses of the provider's tools allowed, and each one's fee. */
  tools?: { uses: ToolUses; fees: ToolFees };
}

/** A request's reservation, held from before it is forwarded until its response ends. */
export interface Hold {
  model: string;
  prices: Prices;
  /** The fee of each use of the provider's tools. */
  fees: ToolFees;
  bill: bigint;
  list: bigint;
}

export type Reservation =
  | { ok: true; hold: Hold }
  | { ok: false; why: "budget" | "request-cap"; message: string };

/** How a response ended, for `close`. */
export interface Ending {
  usage: Usage;
  /** The response carried usage. */
  reported: boolean;
  /** The provider accepted the request (2xx): only then can it bill. */
  accepted: boolean;
  /** The body stopped before its end (the attempt was over, the connection broke). */
  cut: boolean;
  /** Uses of the provider's tools the response reported (none: none). */
  tools?: ToolUses;
}

/** Picodollars per token of the dearest kind of input token (plain, cache read, cache write). */
function dearestInput(p: ModelPrices): bigint {
  return [p.input, p.cacheRead, p.cacheWrite].map(picoPerToken).reduce((a, b) => (a > b ? a : b));
}

/** The most `worst` can cost at `p` (its tools' fees at `which`), picodollars. */
export function worstPico(
  worst: WorstCase,
  p: ModelPrices,
  which: "bill" | "list" = "list",
): bigint {
  const fees = worst.tools ? feesPico(worst.tools.uses, worst.tools.fees, which) : 0n;
  return BigInt(worst.inputTokens) * dearestInput(p) +
    BigInt(worst.outputTokens) * picoPerToken(p.output) + fees;
}

/**
 * Output tokens that fit in `room` picodollars after the input of `inputTokens`, at list
 * price (no limit when output is free).
 */
export function outputThatFits(room: bigint, inputTokens: number, p: ModelPrices): number {
  const left = room - BigInt(inputTokens) * dearestInput(p);
  if (left < 0n) return 0;
  const per = picoPerToken(p.output);
  if (per === 0n) return Number.MAX_SAFE_INTEGER;
  const n = left / per;
  return n > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(n);
}

/** ", and up to N web searches and M fetches" for a refusal's message. */
function toolsText(worst: WorstCase): string {
  const u = worst.tools?.uses;
  if (!u || u.webSearch + u.webFetch === 0) return "";
  return `, and up to ${u.webSearch} web searches and ${u.webFetch} web fetches of the ` +
    `provider (their fees and results)`;
}

export class BudgetLedger {
  private readonly byModel = new Map<string, { usage: Usage; prices: Prices }>();
  private readonly held = new Set<Hold>();
  /** Charged beyond metered usage: holds kept for responses without usage. */
  private kept = { bill: 0n, list: 0n };
  /** Fees of the provider's tools metered. */
  private fees = { bill: 0n, list: 0n };
  /** Uses of the provider's tools metered. */
  toolUses: ToolUses = { ...NO_TOOL_USES };
  /** Requests reserved (forwarded or being forwarded). */
  requests = 0;
  /** Responses that carried no usage. */
  unmetered = 0;
  stopped: "budget" | "request-cap" | null = null;

  constructor(
    /** Spend allowed at list price, microdollars. */
    readonly budgetMicros: number,
    /** Requests forwarded at most. */
    readonly maxRequests: number,
  ) {}

  /** Spent and held now, picodollars, at bill or list price. */
  committed(which: "bill" | "list"): bigint {
    let total = this.kept[which] + this.fees[which];
    for (const { usage, prices } of this.byModel.values()) total += costPico(usage, prices[which]);
    for (const h of this.held) total += h[which];
    return total;
  }

  /** What is left of the budget for a new reservation, picodollars (never negative). */
  room(): bigint {
    const left = BigInt(Math.max(0, Math.floor(this.budgetMicros))) * 1_000_000n -
      this.committed("list");
    return left > 0n ? left : 0n;
  }

  /** Reserves `worst` for a request to `model`, or says why it cannot be forwarded. */
  reserve(model: string, prices: Prices, worst: WorstCase): Reservation {
    if (this.requests >= this.maxRequests) {
      this.stopped ??= "request-cap";
      return {
        ok: false,
        why: "request-cap",
        message: `this attempt's limit of ${this.maxRequests} model requests is reached`,
      };
    }
    const hold: Hold = {
      model,
      prices,
      fees: worst.tools?.fees ?? NO_TOOL_FEES,
      bill: worstPico(worst, prices.bill, "bill"),
      list: worstPico(worst, prices.list, "list"),
    };
    const room = this.room();
    if (hold.list > room) {
      this.stopped ??= "budget";
      return {
        ok: false,
        why: "budget",
        message: `this attempt's budget of ${formatDollars(this.budgetMicros)} (list price) ` +
          `cannot pay for this request: it could cost up to ${
            formatDollars(picoToMicros(hold.list))
          } (${worst.inputTokens} input tokens, estimated from its size, ` +
          `${worst.outputTokens} output tokens${toolsText(worst)}), and ` +
          `${formatDollars(picoToMicros(room))} ` +
          `is left (requests in flight hold their worst case until they end)`,
      };
    }
    this.requests++;
    this.held.add(hold);
    return { ok: true, hold };
  }

  /** A response ended: its usage replaces its hold, or the hold is kept (see `Ending`). */
  close(hold: Hold, end: Ending): void {
    if (!this.held.delete(hold)) return;
    const cur = this.byModel.get(hold.model);
    this.byModel.set(hold.model, {
      prices: hold.prices,
      usage: addUsage(cur?.usage ?? { ...NO_USAGE }, end.usage),
    });
    if (end.accepted && !end.reported) this.unmetered++;
    const uses = end.tools ?? NO_TOOL_USES;
    this.toolUses = addToolUses(this.toolUses, uses);
    const fees = {
      bill: feesPico(uses, hold.fees, "bill"),
      list: feesPico(uses, hold.fees, "list"),
    };
    this.fees.bill += fees.bill;
    this.fees.list += fees.list;
    // Without a complete account of what the provider did, it may have billed the worst.
    if (end.accepted && (end.cut || !end.reported)) {
      for (const which of ["bill", "list"] as const) {
        const extra = hold[which] - costPico(end.usage, hold.prices[which]) - fees[which];
        if (extra > 0n) this.kept[which] += extra;
      }
    }
  }

  /** Tokens by model id, sorted by id. */
  usageByModel(): [string, Usage][] {
    return [...this.byModel.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([id, m]) => [id, m.usage]);
  }

  /** Spent (and still held) in whole microdollars. */
  spentMicros(which: "bill" | "list"): number {
    return picoToMicros(this.committed(which));
  }
}
