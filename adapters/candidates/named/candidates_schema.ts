/**
 * The schema of a home's `candidates.edn` (candidates_file.ts), apart so that zod loads only
 * when there is such a file to read.
 */
import { z } from "zod";
import { AGENT_CLIS } from "../agent_cli/agent_clis.ts";
import { NAME } from "../spec_text.ts";

const namedCommandSchema = z.strictObject({
  command: z.string().min(1),
  mounts: z.array(z.string().min(1)).optional(),
  env: z.record(z.string(), z.string()).optional(),
  "pass-env": z.array(z.string().min(1)).optional(),
  network: z.boolean().optional(),
  "max-requests": z.number().int().min(1).max(10_000).optional(),
  models: z.array(z.string().min(1)).min(1).optional(),
  doc: z.string().optional(),
});
const namedAgentSchema = z.strictObject({
  agent: z.enum(AGENT_CLIS),
  model: z.string().min(1),
  "install-dir": z.string().min(1).optional(),
  "max-turns": z.number().int().min(1).max(1000).optional(),
  args: z.array(z.string()).optional(),
  doc: z.string().optional(),
});
export const namedFileSchema = z.record(
  z.string().regex(NAME),
  z.union([namedCommandSchema, namedAgentSchema]),
);
