/**
 * An operation: the one definition that both the CLI and the MCP server call. Each op
 * has a tool name, a flat closed zod input schema, a kind (read | write | destructive)
 * from which MCP annotations are derived, a toolset that decides which connections see
 * it, and a handler over an OpContext. A new op appears in MCP with no extra code.
 */
import type { z } from "zod";
import type { Home } from "../ports/home.ts";
import type { CheckerRunner } from "../checker.ts";
import type { Services } from "../ports/services.ts";
import type { JobRunner, Progress } from "../jobs.ts";
import type { FormatValue, JsonFormat } from "../json_format.ts";
export type { JobRunner, JobSpec } from "../jobs.ts";

/** Progress of long work, as MCP progress notifications and job records carry it. */
export type OpProgress = Progress;

export type OpKind = "read" | "write" | "destructive";

/** Everything an op may touch; passed in, so ops run the same under the CLI, MCP and tests. */
export interface OpContext {
  home: Home;
  /** The adapters the ops run on (adapters/compose.ts). */
  services: Services;
  runner: CheckerRunner;
  env(name: string): string | undefined;
  cwd: string;
  clock(): Date;
  /** Cancels the op (an MCP request cancelled, a job cancelled). */
  signal?: AbortSignal;
  progress?(p: OpProgress): void;
  /** Long-running work: jobs outlive the request that started them (MCP). */
  jobs?: JobRunner;
}

// deno-lint-ignore no-explicit-any
export type AnyZodObject = z.ZodObject<any>;

export interface Op<I extends AnyZodObject = AnyZodObject, F extends JsonFormat = JsonFormat> {
  /** Tool name, `^[a-z][a-z0-9_]{0,39}$` (e.g. room_write). */
  name: string;
  title: string;
  description: string;
  kind: OpKind;
  /** The toolset that lists it (rooms, files, catalog, bench, jobs, scorecards, admin). */
  toolset: string;
  input: I;
  /**
   * The format of its result (core/json_format.ts): the MCP tool's outputSchema, the
   * `format` of its structuredContent and of the CLI's --json, and schemas/ are all this.
   */
  output: F;
  /** Calling it twice with the same input has no further effect. */
  idempotent?: boolean;
  /** It reaches outside the home (model APIs, the network). */
  openWorld?: boolean;
  /** Its input has a `room` parameter that a pinned connection supplies. */
  roomScoped?: boolean;
  /**
   * Text that depends on the adapters wired (e.g. the candidate kinds): the op's
   * description and its arguments' descriptions as clients are shown them.
   */
  explain?(services: Services): OpExplanation;
  handler(ctx: OpContext, input: z.infer<I>): Promise<FormatValue<F>>;
}

/** What an op's explain() gives: its description, and descriptions of some arguments. */
export interface OpExplanation {
  description?: string;
  args?: Record<string, string>;
}

/**
 * The op as clients see it with these adapters: explain()'s description and argument
 * descriptions in place of the static ones (the same op when it has no explain()).
 */
export function explainedOp<I extends AnyZodObject, F extends JsonFormat>(
  op: Op<I, F>,
  services: Services,
): Op<I, F> {
  if (!op.explain) return op;
  const { description, args = {} } = op.explain(services);
  const shape: Record<string, z.ZodType> = op.input.shape;
  const described = Object.fromEntries(
    Object.entries(args).filter(([k]) => shape[k]).map(([k, text]) => [k, shape[k].describe(text)]),
  );
  return {
    ...op,
    description: description ?? op.description,
    input: op.input.extend(described) as unknown as I,
  };
}

/** Defines an op with its input and result types inferred from its schemas. */
export function defineOp<I extends AnyZodObject, F extends JsonFormat>(op: Op<I, F>): Op<I, F> {
  return op;
}
