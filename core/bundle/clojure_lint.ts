/**
 * Warnings for checker.clj constructs that behave differently in the sandbox than on the
 * JVM the earlier system ran them on, without any error: Java-only regex syntax inside
 * `#"…"` literals (JavaScript regexes read it as something else) and `(.length s)`.
 * Pure.
 */
import type { Bundle } from "./types.ts";

export interface ClojureWarning {
  line: number;
  column: number;
  message: string;
}

const REGEX_RULES: { test: RegExp; message: (m: string) => string }[] = [
  {
    test: /\\[pP]\{[^}]*\}/,
    message: (m) =>
      `${m} is a Java Unicode class: the sandbox's JavaScript regexes read it as the text "${
        m.slice(1)
      }", so it silently matches something else (write a class such as [A-Za-zÀ-ÿ])`,
  },
  {
    test: /\\[AzZ]/,
    message: (m) =>
      `${m} is a Java anchor: the sandbox's JavaScript regexes read it as the letter "${
        m.slice(1)
      }" (use ^ and $)`,
  },
  {
    test: /(?<!\\)(?:[*+?]|\{\d+(?:,\d*)?\})\+/,
    message: (m) =>
      `${m} is a Java possessive quantifier: the sandbox's JavaScript regexes do not have them (drop the second +)`,
  },
];

/** The warnings for a checker.clj source, in source order. */
export function clojureWarnings(source: string): ClojureWarning[] {
  const out: ClojureWarning[] = [];
  let line = 1;
  let col = 1;
  let i = 0;
  const advance = (n: number) => {
    for (let k = 0; k < n && i < source.length; k++, i++) {
      if (source[i] === "\n") {
        line++;
        col = 1;
      } else col++;
    }
  };
  while (i < source.length) {
    const c = source[i];
    if (c === ";") {
      while (i < source.length && source[i] !== "\n") advance(1);
    } else if (c === "\\" && source[i + 1] !== undefined) {
      advance(2); // a character literal such as \" or \;
    } else if (c === '"' || (c === "#" && source[i + 1] === '"')) {
      const regex = c === "#";
      const at = { line, column: col };
      advance(regex ? 2 : 1);
      const start = i;
      while (i < source.length && source[i] !== '"') advance(source[i] === "\\" ? 2 : 1);
      const body = source.slice(start, i);
      advance(1);
      if (regex) checkRegex(body, at, out);
    } else if (
      c === "(" && source.startsWith(".length", i + 1) && /[\s)]/.test(source[i + 8] ?? "")
    ) {
      out.push({
        line,
        column: col,
        message:
          "(.length s) calls a method that JavaScript strings do not have: it throws in the sandbox (use (count s))",
      });
      advance(1);
    } else advance(1);
  }
  return out;
}

function checkRegex(body: string, at: { line: number; column: number }, out: ClojureWarning[]) {
  // Escaped backslashes ("\\p" is a backslash and a p) are not escapes of the next letter.
  const plain = body.replace(/\\\\/g, "  ");
  for (const rule of REGEX_RULES) {
    const seen = new Set<string>();
    for (const m of plain.matchAll(new RegExp(rule.test.source, "g"))) {
      if (seen.has(m[0])) continue;
      seen.add(m[0]);
      out.push({ ...at, message: `#"${clip(body)}": ${rule.message(m[0])}` });
    }
  }
}

function clip(s: string): string {
  return s.length > 40 ? s.slice(0, 37) + "…" : s;
}

/** Which checker a bundle runs, and what `check` (CLI and MCP) says about it. */
export interface CheckerFacts {
  checker: "checker.js" | "checker.clj";
  /** checker.clj beside checker.js: present, not used. */
  unused: "checker.clj" | null;
  /** For checker.clj: constructs that behave differently than on the JVM. */
  warnings: (ClojureWarning & { file: "checker.clj" })[];
}

/** The checker facts of a parsed bundle. */
export function checkerFacts(bundle: Bundle): CheckerFacts {
  const clj = bundle.checkerFile === "checker.clj";
  return {
    checker: bundle.checkerFile,
    unused: !clj && bundle.files.has("checker.clj") ? "checker.clj" : null,
    warnings: clj
      ? clojureWarnings(bundle.checker).map((w) => ({ file: "checker.clj" as const, ...w }))
      : [],
  };
}
