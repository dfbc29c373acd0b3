/** The report as blocks, before a renderer (Markdown, HTML) writes it. */

/** A table of the report: cells are display text; `align` per column. */
export interface ReportTable {
  header: string[];
  align: ("left" | "right")[];
  rows: string[][];
  /** Per row and column a value in [0, 1] (null: none) that a drawing renderer shades by. */
  heat?: (number | null)[][];
}

/**
 * One block of the report. Text may use `**bold**` and `` `code` ``, nothing else.
 * The frontier plot is a marker for renderers that draw (HTML); Markdown leaves it out.
 */
export type ReportBlock =
  | { kind: "title"; text: string }
  | { kind: "heading"; text: string }
  | { kind: "paragraph"; text: string }
  | { kind: "table"; table: ReportTable }
  /** Preformatted text (a candidate's stderr), shown as is. */
  | { kind: "code"; text: string }
  | { kind: "frontier-plot" };
