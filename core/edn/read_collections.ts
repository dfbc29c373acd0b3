/**
 * The EDN reader's collections and the frames that wait for a value: opening a map,
 * vector, list, set, tag or discard; handing each finished value to the innermost open
 * frame (refusing duplicate keys and set elements); closing a collection at its bracket.
 */
import { EdnList, EdnSet, type EdnValue, Keyword } from "./values.ts";
import {
  CLOSER_NAME,
  DISCARD,
  excerpt,
  fail,
  type Frame,
  lineCol,
  LIST,
  MAP,
  type Reader,
  SET,
  TAG,
} from "./read_state.ts";
import { equalityKey } from "./equality_key.ts";
import { tagged } from "./read_tags.ts";

/** Opens a frame of `kind` at `at` and moves past its opening (`width` characters). */
export function open(
  r: Reader,
  kind: number,
  what: string,
  closer: number,
  at: number,
  width: number,
): void {
  if (r.stack.length >= r.maxDepth) {
    fail(
      r,
      at,
      "nesting deeper than " + r.maxDepth + " levels",
      "Flatten the data: EDN read here is limited to " + r.maxDepth + " nested levels",
    );
  }
  r.stack.push({
    kind,
    what,
    closer,
    at,
    items: [],
    map: kind === MAP ? new Map() : null,
    firstAt: null,
    firstAtByKey: null,
    key: null,
    keyAt: -1,
  });
  r.pos = at + width;
}

/** Fails on a tag or discard that the text ends or closes before its value. */
export function notFollowed(r: Reader, f: Frame): never {
  return fail(r, f.at, f.what + " is not followed by a value", "Put a value after " + f.what);
}

/** Hands a finished value, which started at `start`, to the innermost open frame. */
export function deliver(r: Reader, value: EdnValue, start: number): void {
  const stack = r.stack;
  let v = value;
  let at = start;
  for (;;) {
    const f = stack.length === 0 ? null : stack[stack.length - 1];
    if (f === null) {
      if (r.one && r.out.length === 1) {
        fail(
          r,
          at,
          "a second value after the first: this text must hold exactly one EDN value",
          "Remove the extra text, or wrap the values in a vector […]",
        );
      }
      r.out.push(v);
      return;
    }
    switch (f.kind) {
      case DISCARD:
        stack.pop();
        return;
      case TAG:
        // The tagged value is finished in its turn, and started where its tag did.
        stack.pop();
        v = tagged(r, f.what.slice(1), v, at);
        at = f.at;
        continue;
      case SET:
        checkUnique(r, f, v, at, "set element");
        f.items.push(v);
        return;
      case MAP:
        if (f.keyAt < 0) {
          checkUnique(r, f, v, at, "map key");
          f.key = v;
          f.keyAt = at;
          f.keyEnd = r.pos;
        } else {
          f.map!.set(f.key, v);
          f.keyAt = -1;
        }
        return;
      default:
        f.items.push(v);
        return;
    }
  }
}

/** A closing bracket `c`: ends the innermost collection and delivers it. */
export function close(r: Reader, c: number): void {
  const f = r.stack[r.stack.length - 1];
  if (f.kind === TAG || f.kind === DISCARD) notFollowed(r, f);
  if (c !== f.closer) {
    fail(
      r,
      r.pos,
      'mismatched "' + CLOSER_NAME[c] + '": expected "' + CLOSER_NAME[f.closer] +
        '" to close the ' + f.what,
      "Check the brackets between the opening and this position",
      f.at,
    );
  }
  r.pos++;
  r.stack.pop();
  let v: EdnValue;
  if (f.kind === MAP) {
    if (f.keyAt >= 0) {
      fail(
        r,
        f.keyAt,
        "map key " + excerpt(r, f.keyAt, f.keyEnd!) +
          " has no value (odd number of forms in the map)",
        "Every map key needs a value: {:key value}",
      );
    }
    v = f.map!;
  } else if (f.kind === SET) v = new EdnSet(f.items);
  else if (f.kind === LIST) v = new EdnList(f.items);
  else v = f.items;
  deliver(r, v, f.at);
}

// Refuses a map key or set element equal to an earlier one (Clojure equality).
// Strings, keywords (interned), booleans and nil are equal only when identical, and
// never equal to any other kind, so they skip the equality key.
function checkUnique(r: Reader, f: Frame, v: EdnValue, start: number, what: string): void {
  let first: number | undefined;
  if (
    typeof v === "string" || v instanceof Keyword || v === null || v === true || v === false
  ) {
    f.firstAt ??= new Map();
    first = f.firstAt.get(v);
    if (first === undefined) {
      f.firstAt.set(v, start);
      return;
    }
  } else {
    const id = equalityKey(v);
    f.firstAtByKey ??= new Map();
    first = f.firstAtByKey.get(id);
    if (first === undefined) {
      f.firstAtByKey.set(id, start);
      return;
    }
  }
  const p = lineCol(r, first);
  fail(
    r,
    start,
    "duplicate " + what + " " + excerpt(r, start, r.pos) + " (first at line " + p.line +
      ", column " + p.column + ")",
    f.kind === MAP ? "Keep one entry per key" : "Keep one of each element in a set",
  );
}
