/**
 * Options listed in a judge prompt, moved between asks to expose position bias, and the
 * answers read back to the option they chose.
 *
 * A prompt lists options when it has a block of two or more consecutive lines that each
 * start (after optional indentation) with a label of one style, in sequence from the
 * first label: letters `A)` `A.` `A:` `(A)` (A, B, C…; or a, b, c…), numbers `1)` `1.`
 * `1:` `(1)` (1, 2, 3…), or bullets `-` `*` `•`; a label is followed by whitespace and the
 * option's text. The first such block counts. Numbered steps are such a block too: a
 * prompt whose numbered lines are not options should letter its options or use none.
 *
 * Ask j shows the options rotated by j: the label in position p gets option (p + j) mod n,
 * labels stay where they were. An answer chooses an option by its label at the start
 * (`B`, `(B)`, `B)`, `Option B`, `Answer: B`; letters in either case), else by starting
 * with the option's text; bullets are chosen by text only. Pure.
 */

export type OptionStyle = "letter" | "number" | "bullet";

export interface ListedOptions {
  style: OptionStyle;
  /** The prompt's lines. */
  lines: string[];
  /** Index of the first option line. */
  start: number;
  /** Per option, in the prompt's order: the label as written (with its spacing) and the text. */
  options: { prefix: string; label: string; text: string }[];
}

const LETTER = /^(\s*(?:\(([A-Za-z])\)|([A-Za-z])[).:])\s+)(\S.*)$/;
const NUMBER = /^(\s*(?:\((\d{1,2})\)|(\d{1,2})[).:])\s+)(\S.*)$/;
const BULLET = /^(\s*[-*•]\s+)(\S.*)$/;

/** The label, style and text of an option line, else null. */
function optionLine(
  line: string,
): { style: OptionStyle; prefix: string; label: string; text: string } | null {
  const b = BULLET.exec(line);
  if (b) return { style: "bullet", prefix: b[1], label: "", text: b[2] };
  for (const [style, re] of [["letter", LETTER], ["number", NUMBER]] as const) {
    const m = re.exec(line);
    if (m) return { style, prefix: m[1], label: m[2] ?? m[3], text: m[4] };
  }
  return null;
}

/** The label that follows `label` in its style ("A" → "B", "9" → "10"). */
function nextLabel(style: OptionStyle, label: string): string {
  if (style === "number") return String(Number(label) + 1);
  if (style === "letter") return String.fromCharCode(label.charCodeAt(0) + 1);
  return "";
}

function firstLabel(style: OptionStyle, label: string): boolean {
  if (style === "number") return label === "1";
  if (style === "letter") return label === "A" || label === "a";
  return true;
}

/** The options `prompt` lists (the first block, as the module says), or null. */
export function listedOptions(prompt: string): ListedOptions | null {
  const lines = prompt.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const head = optionLine(lines[i]);
    if (!head || !firstLabel(head.style, head.label)) continue;
    const options = [{ prefix: head.prefix, label: head.label, text: head.text }];
    let want = nextLabel(head.style, head.label);
    for (let j = i + 1; j < lines.length; j++) {
      const o = optionLine(lines[j]);
      if (!o || o.style !== head.style || o.label !== want) break;
      options.push({ prefix: o.prefix, label: o.label, text: o.text });
      want = nextLabel(o.style, o.label);
    }
    if (options.length >= 2) return { style: head.style, lines, start: i, options };
  }
  return null;
}

/** The option shown in position `p` on ask `shift`: rotated by the shift. */
export function shownOption(n: number, p: number, shift: number): number {
  return (p + shift) % n;
}

/** The prompt with its options rotated by `shift` (labels stay in place). */
export function rotatedPrompt(lo: ListedOptions, shift: number): string {
  const n = lo.options.length;
  const lines = [...lo.lines];
  lo.options.forEach((o, p) => {
    lines[lo.start + p] = o.prefix + lo.options[shownOption(n, p, shift)].text;
  });
  return lines.join("\n");
}

function normText(s: string): string {
  return s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim();
}

/**
 * The position (0-based, as shown) that `answer` chose, or null when it names no option.
 * `shift` is the rotation the prompt was asked with.
 */
export function chosenPosition(lo: ListedOptions, answer: string, shift: number): number | null {
  const n = lo.options.length;
  if (lo.style !== "bullet") {
    const m = /^\s*(?:(?:option|answer)\s*:?\s*)?[("'*]*([A-Za-z]|\d{1,2})(?=$|[)\].:,;\s"'*])/i
      .exec(answer);
    if (m) {
      const label = m[1].toLowerCase();
      const p = lo.options.findIndex((o) => o.label.toLowerCase() === label);
      if (p >= 0) return p;
    }
  }
  const said = normText(answer);
  // The longest text first, so "not a rival" wins over "rival".
  const byLength = lo.options.map((_, p) => p).sort((a, b) => {
    const ta = normText(lo.options[shownOption(n, a, shift)].text);
    const tb = normText(lo.options[shownOption(n, b, shift)].text);
    return tb.length - ta.length;
  });
  for (const p of byLength) {
    const text = normText(lo.options[shownOption(n, p, shift)].text);
    if (text !== "" && (said === text || said.startsWith(text + " "))) return p;
  }
  return null;
}

/** What an answer without options says: its first word, lower-cased ("Yes, it is." → "yes"). */
export function answerWord(answer: string): string {
  const m = /[\p{L}\p{N}]+/u.exec(answer.toLowerCase());
  return m ? m[0] : "(no answer)";
}
