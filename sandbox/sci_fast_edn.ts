/**
 * A fast path for `clojure.edn/read-string` inside the Clojure sandbox. SCI's reader
 * (tools.reader, compiled ClojureScript) reads one character at a time through protocol
 * calls: in QuickJS a 3 KB answer took ~10 ms, a third of a token-F1 checker's verdict. This
 * reader, plain JavaScript evaluated at boot (so it lies in every snapshot), reads the common
 * subset of EDN in a single pass, ~20× faster, and builds the values with the same
 * ClojureScript constructors tools.reader uses, so the result is the same value of the same
 * types in the same order.
 *
 * It answers only when it is sure: any text outside the subset (a tag, a symbol other than
 * nil/true/false, a character literal, a comment, metadata, a ratio or a number beyond 15
 * digits, an escape other than \t \r \n \b \f \\ \" \uXXXX, a map key or set element that is
 * a collection, a duplicate key, an unterminated form, anything odd) makes it hand the text
 * to the original reader, which then reads it, or throws its own error, as before. Calls with
 * options (`(edn/read-string opts s)`) always go to the original.
 *
 * Like tools.reader's `read-string`, it reads the first form and ignores the rest; an empty
 * or blank text is nil.
 */

/**
 * JavaScript evaluated in QuickJS after scittle: defines `globalThis.__dvergrFastEdn(C)`,
 * which takes the ClojureScript constructors and returns `{read, FALLBACK}`: `read(text)`
 * answers the value, or the sentinel `FALLBACK`.
 */
export const FAST_EDN_JS = `(function () {
  "use strict";
  globalThis.__dvergrFastEdn = function (C) {
    const FALLBACK = { fallback: true };
    const Keyword = C.Keyword;
    const ArrayMap = C.ArrayMap;
    const fromCharCode = String.fromCharCode;
    const parseHex = (t) => parseInt(t, 16);
    // tools.reader's whitespace: space, tab, newline, return and the comma.
    const isWs = (c) => c === 32 || c === 44 || c === 10 || c === 13 || c === 9;
    // Characters that end a number (tools.reader's macro characters).
    const NUMBER_END = '";:^()[]{}\\\\#';
    // Characters that end a keyword or symbol (the macro characters but # and :).
    const TOKEN_END = '";^()[]{}\\\\';
    const INT = /^-?(?:0|[1-9][0-9]{0,14})$/;
    const FLOAT = /^-?[0-9]{1,15}\\.[0-9]{1,15}(?:[eE][-+]?[0-9]{1,3})?$/;
    const PART = "[A-Za-z_*!?<>=][A-Za-z0-9_*!?<>=.+-]*";
    const KEYWORD = new RegExp("^(?:(" + PART + ")/)?(" + PART + ")$");
    const HEX4 = /^[0-9A-Fa-f]{4}$/;
    const QUOTE_OR_ESCAPE = /["\\\\]/g;

    function read(s) {
      if (typeof s !== "string") return FALLBACK;
      const n = s.length;
      let i = 0;
      const skip = () => {
        while (i < n && isWs(s.charCodeAt(i))) i++;
      };
      const token = (ends) => {
        const from = i;
        while (i < n) {
          const c = s.charCodeAt(i);
          if (isWs(c) || ends.indexOf(s[i]) >= 0) break;
          i++;
        }
        return s.slice(from, i);
      };
      // The identity of the scalar form() read last (for duplicate keys), or null after a
      // collection.
      let id = null;
      // The forms up to \`close\`; with \`unique\`, every \`step\`th (keys, elements) must be a
      // scalar unlike the others.
      function items(close, unique, step) {
        const out = [];
        const seen = unique ? new Set() : null;
        for (;;) {
          skip();
          if (i >= n) throw FALLBACK;
          if (s[i] === close) {
            i++;
            return out;
          }
          out[out.length] = form();
          if (seen && (out.length - 1) % step === 0) {
            if (id === null || seen.has(id)) throw FALLBACK;
            seen.add(id);
          }
        }
      }
      function string() {
        let out = "";
        let from = i;
        for (;;) {
          // The next quote or backslash, found natively rather than a character at a time.
          QUOTE_OR_ESCAPE.lastIndex = i;
          if (!QUOTE_OR_ESCAPE.test(s)) throw FALLBACK;
          i = QUOTE_OR_ESCAPE.lastIndex - 1;
          if (s[i] === '"') {
            out += s.slice(from, i);
            i++;
            return out;
          }
          out += s.slice(from, i);
          const e = s[i + 1];
          i += 2;
          if (e === "t") out += "\\t";
          else if (e === "r") out += "\\r";
          else if (e === "n") out += "\\n";
          else if (e === "b") out += "\\b";
          else if (e === "f") out += "\\f";
          else if (e === "\\\\") out += "\\\\";
          else if (e === '"') out += '"';
          else if (e === "u" && HEX4.test(s.slice(i, i + 4))) {
            out += fromCharCode(parseHex(s.slice(i, i + 4)));
            i += 4;
          } else throw FALLBACK;
          from = i;
        }
      }
      function form() {
        const ch = s[i];
        const c = s.charCodeAt(i);
        let v;
        if (ch === '"') {
          i++;
          v = string();
          id = "s" + v;
          return v;
        }
        if (ch === ":") {
          i++;
          const t = token(TOKEN_END);
          const m = KEYWORD.exec(t);
          if (!m) throw FALLBACK;
          id = "k" + t;
          // What (keyword ns name) builds, without its checks: both are strings.
          return m[1] === undefined
            ? new Keyword(null, m[2], m[2], null)
            : new Keyword(m[1], m[2], t, null);
        }
        if (ch === "[") {
          i++;
          v = C.vec(items("]", false, 1));
        } else if (ch === "(") {
          i++;
          const xs = items(")", false, 1);
          v = xs.length === 0 ? C.emptyList : C.list(xs);
        } else if (ch === "{") {
          i++;
          const xs = items("}", true, 2);
          if (xs.length % 2 !== 0) throw FALLBACK;
          // Up to 8 keys, what array-map builds from keys it finds no duplicate among (items
          // made sure of that): the map over the array itself.
          v = xs.length <= 16 ? new ArrayMap(null, xs.length / 2, xs, null) : C.hashMap(xs);
        } else if (ch === "#" && s[i + 1] === "{") {
          i += 2;
          v = C.set(items("}", true, 1));
        } else if ((c >= 48 && c <= 57) || (ch === "-" && s.charCodeAt(i + 1) >= 48 && s.charCodeAt(i + 1) <= 57)) {
          const t = token(NUMBER_END);
          if (INT.test(t)) v = +t + 0; // tools.reader reads "-0" as 0
          else if (FLOAT.test(t)) v = +t;
          else throw FALLBACK;
          // 1 and 1.0 are the same number, and equal keys: the identity is the value's.
          id = "n" + v;
          return v;
        } else {
          const t = token(TOKEN_END);
          if (t === "nil") v = null;
          else if (t === "true") v = true;
          else if (t === "false") v = false;
          else throw FALLBACK;
          id = t;
          return v;
        }
        id = null;
        return v;
      }
      try {
        skip();
        if (i >= n) return null;
        return form();
      } catch (_) {
        // Out of the subset, or out of stack or memory: the original reader decides.
        return FALLBACK;
      }
    }
    return { read, FALLBACK };
  };
})();`;

/**
 * The Clojure half, evaluated after FAST_EDN_JS: `clojure.edn/read-string` becomes a
 * function that tries the fast reader first (one argument, a string) and else calls the
 * original. The original is a plain function in scittle's namespace map, not a var, so it
 * is unmapped and a var of the same name interned in its place.
 */
export const FAST_EDN_CLJ = `
(ns dvergr.fast-edn)
(def ^:private original clojure.edn/read-string)
(def ^:private reader
  (js/globalThis.__dvergrFastEdn
    #js {:Keyword (type :k)
         :ArrayMap (type {})
         :vec vec
         :emptyList ()
         :list (fn [a] (apply list a))
         :hashMap (fn [a] (apply hash-map a))
         :set set}))
(def ^:private fallback (.-FALLBACK reader))
(def ^:private read-fast (.-read reader))
(js-delete js/globalThis "__dvergrFastEdn")
(ns-unmap 'clojure.edn 'read-string)
(intern 'clojure.edn 'read-string
  (fn read-string
    ([s] (let [v (read-fast s)] (if (identical? v fallback) (original s) v)))
    ([opts s] (original opts s))))
`;
