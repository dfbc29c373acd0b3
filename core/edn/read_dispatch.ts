/** The EDN reader after `#`: sets, discards, symbolic values (`##Inf`) and tags. */
import { DISCARD, excerpt, fail, type Reader, SET, TAG, tokenEnd } from "./read_state.ts";
import { deliver, open } from "./read_collections.ts";
import { validName } from "./names.ts";

const ALPHA_RE = /^\p{L}/u;

/** At `#` (offset `at`): opens a set, discard or tag frame, or delivers ##Inf/##-Inf/##NaN. */
export function dispatch(r: Reader, at: number): void {
  const text = r.text;
  const c1 = text.charCodeAt(at + 1);
  if (c1 === 0x7b) return open(r, SET, "set", 0x7d, at, 2);
  if (c1 === 0x5f) return open(r, DISCARD, "#_", -1, at, 2);
  if (c1 === 0x23) {
    const j = tokenEnd(r, at + 2);
    const tok = text.slice(at + 2, j);
    r.pos = j;
    if (tok === "Inf") return deliver(r, Infinity, at);
    if (tok === "-Inf") return deliver(r, -Infinity, at);
    if (tok === "NaN") return deliver(r, NaN, at);
    fail(r, at, 'unknown symbolic value "##' + tok + '"', "Use ##Inf, ##-Inf or ##NaN");
  }
  if (c1 === 0x3a) {
    fail(
      r,
      at,
      "namespaced map syntax #:ns{…} is not supported",
      "Write the keys in full: {:ns/a 1 :ns/b 2}",
    );
  }
  if (at + 1 < r.n && ALPHA_RE.test(text.slice(at + 1, at + 3))) {
    const j = tokenEnd(r, at + 1);
    const tag = text.slice(at + 1, j);
    if (!validName(tag, false)) fail(r, at, 'bad tag "#' + excerpt(r, at + 1, j) + '"');
    return open(r, TAG, "#" + tag, -1, at, j - at);
  }
  fail(
    r,
    at,
    'unknown dispatch "#' + (at + 1 < r.n ? text[at + 1] : "") + '"',
    "EDN allows #{…} (set), #_ (discard), ##Inf/##-Inf/##NaN and #tag value",
  );
}
