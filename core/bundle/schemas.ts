/**
 * The closed schemas of a bundle's EDN files, over their plain JS form
 * (core/edn/plain.ts: keyword keys become names without the colon).
 */
import { z } from "zod";

const stringMap = z.record(z.string(), z.string());

/** `:capture` entries: absolute world directories without any "." (docs/compatibility.md §1.3). */
const capturePath = z.string().regex(/^\/[^.]*$/, {
  message: 'expected an absolute world directory without "." such as "/out"',
});

export const workflowSchema = z.strictObject({
  title: z.string().min(1),
  doc: z.string().optional(),
  params: z.record(z.string(), z.unknown()).optional(),
  task: z.string().min(1),
  profile: z.string().optional(),
  capture: z.array(capturePath).min(1).optional(),
  "timeout-ms": z.number().int().min(1000).max(86_400_000).optional(),
  fetched: z.boolean().optional(),
  judge: z.strictObject({
    model: z.string().min(1),
    "max-requests": z.number().int().min(1).max(50).optional(),
  }).optional(),
  "allowed-sources": z.array(z.string().min(1)).optional(),
  "blocked-sources": z.array(z.string().min(1)).optional(),
  web: z.enum(["live", "frozen"]).optional(),
  review: z.record(z.string(), z.unknown()).optional(),
});

export type WorkflowEdn = z.infer<typeof workflowSchema>;

const variantSchema = z.strictObject({
  files: stringMap,
  fetched: stringMap.optional(),
  judgements: stringMap.optional(),
  loses: z.array(z.string()),
});

export const calibrationSchema = z.strictObject({
  case: z.string().optional(),
  reference: stringMap.optional(),
  fetched: stringMap.optional(),
  judgements: stringMap.optional(),
  damaged: z.record(z.string(), variantSchema).optional(),
  /** Updates a run could leave (world path → text, nil: removed) and the review's answer. */
  reviews: z.record(
    z.string(),
    z.strictObject({
      files: z.record(z.string(), z.string().nullable()),
      expect: z.enum(["approve", "escalate"]),
    }),
  ).optional(),
});

export type CalibrationEdn = z.infer<typeof calibrationSchema>;

export const certificationSchema = z.object({
  cases: z.number().int().min(0),
  certified: z.number().int().min(0),
  "by-reason": z.record(z.string(), z.number().int().min(0)),
  excluded: z.array(z.object({ id: z.string(), reasons: z.array(z.unknown()) }).loose()),
}).loose();

/** web.edn (docs/compatibility.md §1.11): http(s) URLs without query or fragment → {:title :body}, at least one. */
export const webSchema = z.record(
  z.string().regex(/^https?:\/\/[^\s?#]+$/, {
    message: "expected an http(s) URL without query or fragment",
  }),
  z.strictObject({
    title: z.string(),
    body: z.string().max(50_000, { message: "expected a body of at most 50000 characters" }),
  }),
).refine((pages) => Object.keys(pages).length > 0, { message: "expected at least one page" });
