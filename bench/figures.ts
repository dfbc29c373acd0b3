// A bench helper: its figures on the console are its output.
// deno-lint-ignore-file no-console
/**
 * The figures the benchmarks report against their targets, in one form: each bench prints
 * its own lines for a reader, and one `FIGURE {json}` line per figure that has a target,
 * which bench/run_all.ts collects into the table it prints at the end (Markdown, ready to
 * paste into the README's Performance table): what was measured, the figure, its peer (what
 * it is compared with, measured in the same run), their ratio, the target and the load
 * average while it was measured.
 */

/** One measured figure and what it is held against. */
export interface Figure {
  /** The target's key, for the table's order: "1", "2a", "4-quiet"… (see TARGETS). */
  target: string;
  /** The figure, with its unit: "0.84 s", "12.7 MiB". */
  figure: string;
  /** What it is compared with, measured in the same run: "promptfoo 3.11 s"; absent when the target is absolute. */
  peer?: string;
  /** figure / peer, when there is a peer. */
  ratio?: number;
  /** The load average (1 minute) before and after the measurement: "1.10 → 1.35". */
  load: string;
  /** A note: how many runs, the median of what. */
  note?: string;
}

/** The targets the figures are held against, in the order the table lists them. */
export const TARGETS: Record<string, { what: string; goal: string }> = {
  "1": {
    what: "200-case shell-agent job, sandboxed, vs promptfoo's exec: (bench/command_bench.ts)",
    goal: "ratio ≤ 1.0",
  },
  "2a": {
    what:
      "dvergr's memory per concurrent command attempt, 64 sleepers (bench/concurrency_bench.ts)",
    goal: "≤ 10 MiB",
  },
  "2b": {
    what:
      "an agent CLI attempt's overhead beyond the CLI's own start, local fake provider (bench/agent_overhead_bench.ts)",
    goal: "≤ 100 ms",
  },
  "3a": {
    what: "dvergr check, JavaScript bundle, vs dvergr --help (bench/startup_bench.ts)",
    goal: "ratio ≤ 2",
  },
  "3b": {
    what: "dvergr calibrate, JavaScript bundle, vs dvergr --help (bench/startup_bench.ts)",
    goal: "ratio ≤ 2",
  },
  "4-quiet": {
    what: "1,000-case job vs promptfoo (bench/promptfoo_compare.ts)",
    goal: "ratio ≤ 0.25",
  },
  "4-burners": {
    what: "1,000-case job vs promptfoo beside two CPU burners (promptfoo_compare.ts --burners 2)",
    goal: "ratio ≤ 0.4",
  },
  "5a": {
    what: "heavy Clojure checker, warm, per verdict (bench/clojure_bench.ts)",
    goal: "≤ 10 ms",
  },
  "5b": {
    what: "Clojure checker cold start, first verdict of a new pool (bench/clojure_bench.ts)",
    goal: "≤ 300 ms",
  },
};

const PREFIX = "FIGURE ";

/** Prints a figure for bench/run_all.ts to collect (and a reader to skip). */
export function reportFigure(f: Figure): void {
  console.log(PREFIX + JSON.stringify(f));
}

/** The figures among a bench's printed lines. */
export function figuresIn(printed: string): Figure[] {
  const out: Figure[] = [];
  for (const line of printed.split("\n")) {
    if (!line.startsWith(PREFIX)) continue;
    try {
      out.push(JSON.parse(line.slice(PREFIX.length)) as Figure);
    } catch {
      // A line that only looks like one: not a figure.
    }
  }
  return out;
}

/** The 1-minute load average now (read by cat: Deno opens /proc only to --allow-all). */
export async function loadAverage(): Promise<string> {
  try {
    const out = await new Deno.Command("cat", { args: ["/proc/loadavg"], stdout: "piped" })
      .output();
    return new TextDecoder().decode(out.stdout).split(" ")[0] || "?";
  } catch {
    return "?";
  }
}

/** The table of figures against every target (a target no bench reported says so). */
export function figureTable(figures: readonly Figure[]): string {
  const cell = (s: string) => s.replaceAll("|", "\\|");
  const rows = [
    "| Target | Figure | Peer | Ratio | Goal | Load average |",
    "| ------ | ------ | ---- | ----- | ---- | ------------ |",
  ];
  for (const [key, t] of Object.entries(TARGETS)) {
    const mine = figures.filter((f) => f.target === key);
    if (mine.length === 0) {
      rows.push(`| ${cell(t.what)} | not measured in this run | | | ${t.goal} | |`);
    }
    for (const f of mine) {
      const what = f.note ? `${t.what}, ${f.note}` : t.what;
      const ratio = f.ratio === undefined ? "" : f.ratio.toFixed(2);
      rows.push(
        `| ${cell(what)} | ${cell(f.figure)} | ${cell(f.peer ?? "")} | ${ratio} | ${t.goal} | ${
          cell(f.load)
        } |`,
      );
    }
  }
  return rows.join("\n");
}
