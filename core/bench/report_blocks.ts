/** The report as blocks, before a renderer (Markdown, HTML) writes it. */

/** A table of the report: cells are plain text; `align` per column. */
export interface ReportTable {
  header: string[];
  align: ("left" | "right")[];
  rows: string[][];
  /** Per row and column a value in [0, 1] (null: none) that a drawing renderer shades by. */
  heat?: (number | null)[][];
}

/**
 * One block of the report. Title, heading and table text is plain text (each renderer
 * escapes it). Paragraph text may use `**bold**`, `` `code` `` and backslash escapes, nothing
 * else: what a candidate or a bundle gave goes into it through markdownSafe() or
 * markdownCodeSpan() (markdown_safe.ts). The frontier plot is a marker for renderers that
 * draw (HTML); Markdown leaves it out.
 */
export type ReportBlock =
  | { kind: "title"; text: string }
  | { kind: "heading"; text: string }
  | { kind: "paragraph"; text: string }
  | { kind: "table"; table: ReportTable }
  /** Preformatted text (a candidate's stderr), shown as is but for control characters. */
  | { kind: "code"; text: string }
  | { kind: "frontier-plot" };
