/**
 * What the Clojure sandbox evaluates inside QuickJS around SCI, in order:
 *
 * 1. BEFORE_SCI_JS: a `console` (SCI prints through it; lines are kept, bounded, as the
 *    call's logs) and `SCI_DISABLE_JIT` (SCI would otherwise compile with `new Function`,
 *    which costs QuickJS more than it saves);
 * 2. scittle's dist/scittle.js;
 * 3. COMPAT_JS and COMPAT_CLJ: what checkers written for the JVM use (README, "Clojure
 *    checkers"): `Exception` and friends in `catch`, `Integer/parseInt` and friends,
 *    `format`, the common `String` methods;
 * 4. GLUE_CLJ and GLUE_JS: loading a checker, finding `check`/`judge-requests`, turning
 *    the tagged-JSON input into Clojure data, calling, and printing the result with
 *    `pr-str`. GLUE_JS evaluates to an object with `prepare(source)` and
 *    `run(fn, inputJson)`, both answering JSON text.
 *
 * Everything here runs before the base snapshot, so every call starts from it unchanged.
 */

/** Lines and characters of console output kept per call. */
export const MAX_LOG_LINES = 100;
export const MAX_LOG_LINE_CHARS = 2_000;

export const BEFORE_SCI_JS = `(function () {
  "use strict";
  const logs = [];
  const keep = (...args) => {
    if (logs.length >= ${MAX_LOG_LINES}) return;
    let line;
    try { line = args.map((a) => typeof a === "string" ? a : String(a)).join(" "); }
    catch { line = "(a value that cannot be shown)"; }
    logs.push(line.slice(0, ${MAX_LOG_LINE_CHARS}));
  };
  // console.error carries SCI's own error reports, which the fault already tells.
  globalThis.console = { log: keep, info: keep, warn: keep, debug: keep, error() {} };
  globalThis.__dvergrLogs = logs;
  globalThis.SCI_DISABLE_JIT = true;
})();`;

/**
 * JVM exception classes as JavaScript classes: constructible (\`(Exception. "m")\`), and
 * matching in \`catch\` (SCI tests \`instance?\`, which honours Symbol.hasInstance) the way a
 * JVM checker expects: \`Exception\` and \`RuntimeException\` catch every JavaScript error
 * except QuickJS's internal ones (out of memory, stack overflow), \`Throwable\` catches
 * every error, the others their own instances (and their subclasses).
 */
export const COMPAT_JS = `(function () {
  "use strict";
  const g = globalThis;
  const internal = (e) => typeof InternalError === "function" && e instanceof InternalError;
  const own = Function.prototype[Symbol.hasInstance];
  const classes = {};
  const define = (name, parent, matches) => {
    const C = class extends parent {
      constructor(message, cause) {
        super(message === undefined || message === null ? undefined : String(message));
        if (cause !== undefined) this.cause = cause;
      }
      static [Symbol.hasInstance](e) { return matches ? matches(e) : own.call(this, e); }
    };
    Object.defineProperty(C, "name", { value: name });
    Object.defineProperty(C.prototype, "name", { value: "java.lang." + name, writable: true });
    classes[name] = C;
    return C;
  };
  const Throwable = define("Throwable", Error, (e) => e instanceof Error);
  const Exception = define("Exception", Throwable, (e) => e instanceof Error && !internal(e));
  const RuntimeException = define("RuntimeException", Exception, (e) => e instanceof Error && !internal(e));
  const IllegalArgumentException = define("IllegalArgumentException", RuntimeException);
  define("NumberFormatException", IllegalArgumentException);
  define("IllegalStateException", RuntimeException);
  define("ArithmeticException", RuntimeException);
  define("UnsupportedOperationException", RuntimeException);
  define("IndexOutOfBoundsException", RuntimeException);
  define("NullPointerException", RuntimeException);
  define("ClassCastException", RuntimeException);
  // Value classes for \`instance?\` (\`(instance? String x)\`); not constructible.
  const valueClass = (name, test) => {
    const C = function () {
      throw new TypeError(name + " cannot be constructed in the sandbox");
    };
    Object.defineProperty(C, Symbol.hasInstance, { value: test });
    Object.defineProperty(C, "name", { value: name });
    classes[name] = C;
  };
  valueClass("String", (x) => typeof x === "string");
  valueClass("Character", (x) => typeof x === "string" && x.length === 1);
  valueClass("Boolean", (x) => typeof x === "boolean");
  valueClass("Number", (x) => typeof x === "number");
  valueClass("Double", (x) => typeof x === "number");
  valueClass("Long", (x) => Number.isInteger(x));
  valueClass("Integer", (x) => Number.isInteger(x));
  g.__dvergrJvmClasses = classes;

  const S = String.prototype;
  const method = (obj, name, f) =>
    Object.defineProperty(obj, name, { value: f, writable: true, configurable: true });
  method(S, "contains", function (s) { return String(this).includes(String(s)); });
  method(S, "isEmpty", function () { return String(this).length === 0; });
  method(S, "isBlank", function () { return String(this).trim().length === 0; });
  method(S, "equals", function (s) { return typeof s === "string" && String(this) === s; });
  method(S, "equalsIgnoreCase", function (s) {
    return typeof s === "string" && String(this).toLowerCase() === s.toLowerCase();
  });
  method(S, "compareTo", function (s) {
    const a = String(this), b = String(s);
    return a < b ? -1 : a > b ? 1 : 0;
  });
  method(S, "matches", function (re) { return new RegExp("^(?:" + String(re) + ")$").test(String(this)); });
  method(S, "strip", function () { return String(this).trim(); });
  method(Error.prototype, "getMessage", function () {
    return this.message === undefined ? null : this.message;
  });
})();`;

/**
 * The Clojure half of the compatibility layer. The classes are interned into
 * clojure.core (so every namespace sees them), and the static methods live in namespaces
 * named like the classes (\`Integer/parseInt\` resolves as the var parseInt of namespace
 * Integer).
 */
export const COMPAT_CLJ = `
(ns dvergr.compat)
(doseq [[n c] (js->clj js/globalThis.__dvergrJvmClasses)]
  (intern 'clojure.core (symbol n) c))
(js-delete js/globalThis "__dvergrJvmClasses")
(intern 'clojure.core 'format
  (fn [fmt & args] (apply goog.string/format fmt args)))

(defn- nfe [s]
  (throw (new NumberFormatException (str "For input string: \\"" s "\\""))))
(defn parse-integral [s radix lo hi]
  (let [t (str s)
        digits (subs "0123456789abcdefghijklmnopqrstuvwxyz" 0 radix)
        body (if (and (pos? (count t)) (#{"+" "-"} (subs t 0 1))) (subs t 1) t)]
    (when (or (nil? s) (zero? (count body))
              (not (every? #(clojure.string/includes? digits (clojure.string/lower-case %)) body)))
      (nfe s))
    (let [n (js/parseInt t radix)]
      (when (or (< n lo) (> n hi)) (nfe s))
      n)))
(defn parse-double [s]
  (let [t (clojure.string/trim (str s))]
    (if (re-matches #"[+-]?(NaN|Infinity|((\\d+\\.?\\d*|\\.\\d+)([eE][+-]?\\d+)?))[fFdD]?" t)
      (js/Number (clojure.string/replace t #"[fFdD]$" ""))
      (nfe s))))

(ns Integer)
(def MAX_VALUE 2147483647)
(def MIN_VALUE -2147483648)
(defn parseInt ([s] (parseInt s 10)) ([s radix] (dvergr.compat/parse-integral s radix MIN_VALUE MAX_VALUE)))
(defn valueOf ([s] (if (number? s) s (parseInt s))) ([s radix] (parseInt s radix)))
(defn toString ([n] (str n)) ([n radix] (.toString n radix)))

(ns Long)
(def MAX_VALUE js/Number.MAX_SAFE_INTEGER)
(def MIN_VALUE js/Number.MIN_SAFE_INTEGER)
(defn parseLong ([s] (parseLong s 10)) ([s radix] (dvergr.compat/parse-integral s radix MIN_VALUE MAX_VALUE)))
(defn valueOf ([s] (if (number? s) s (parseLong s))) ([s radix] (parseLong s radix)))
(defn toString ([n] (str n)) ([n radix] (.toString n radix)))

(ns Double)
(defn parseDouble [s] (dvergr.compat/parse-double s))
(defn valueOf [s] (if (number? s) s (parseDouble s)))
(defn isNaN [x] (js/isNaN x))
(defn toString [x] (str x))

(ns Boolean)
(defn parseBoolean [s] (= "true" (some-> s str clojure.string/lower-case)))
(defn valueOf [s] (if (boolean? s) s (parseBoolean s)))

(ns String)
(defn valueOf [x] (if (nil? x) "null" (str x)))
(defn join [sep xs] (clojure.string/join sep xs))

(ns Character)
(defn isDigit [c] (boolean (re-matches #"[0-9]" (str c))))
(defn isLetter [c] (boolean (re-matches #"[A-Za-zÀ-ÖØ-öø-ÿ]" (str c))))
(defn isLetterOrDigit [c] (or (isDigit c) (isLetter c)))
(defn isWhitespace [c] (boolean (re-matches #"\\s" (str c))))
(defn isUpperCase [c] (let [s (str c)] (and (not= s (clojure.string/lower-case s)) (= s (clojure.string/upper-case s)))))
(defn isLowerCase [c] (let [s (str c)] (and (not= s (clojure.string/upper-case s)) (= s (clojure.string/lower-case s)))))
(defn toUpperCase [c] (clojure.string/upper-case (str c)))
(defn toLowerCase [c] (clojure.string/lower-case (str c)))
`;

/**
 * The Clojure half of the glue: constructors for the input decoder, the lookup of
 * \`check\` and \`judge-requests\` in the namespace current after the checker loaded, the
 * views of a result that are printed, and what a thrown value says about itself.
 */
export const GLUE_CLJ = `
(ns dvergr.sandbox)
(defn found-fns []
  (let [c (ns-resolve *ns* 'check)
        j (ns-resolve *ns* 'judge-requests)
        g (ns-resolve *ns* 'generate)]
    #js {:ns (str (ns-name *ns*))
         :check (when c @c)
         :hasCheck (some? c)
         :judge (when j @j)
         :hasJudge (some? j)
         :generate (when g @g)
         :hasGenerate (some? g)}))
(defn- bounded [x] (let [s (pr-str x)] (if (> (count s) 500) (str (subs s 0 500) "…") s)))
(defn error-info [e]
  (let [d (ex-data e)]
    #js {:line (:line d) :column (:column d)
         :phase (some-> (:phase d) str) :type (some-> (:type d) str)
         :data (when (and (map? d) (not (:sci.impl/callstack d)) (seq d)) (bounded d))
         :text (when-not (instance? js/Error e) (bounded e))}))
;; Whether a keyword prints as one EDN token: (keyword "a b") prints :a b, which reads as :a
;; and b, so one check name could become two checks. (A regex, not a print and read back: a
;; name may be megabytes long.)
(defn- edn-keyword? [k]
  (not (re-find #"[\\s,;\\"\\\\()\\[\\]{}\`~^@]" (subs (str k) 1))))
(defn- verdict-text [v]
  (let [checks (when (map? v) (:checks v))
        bad (when (map? checks) (first (remove edn-keyword? (filter keyword? (keys checks)))))]
    (if bad
      (pr-str {:dvergr-unprintable-check (subs (str bad) 1)})
      (pr-str (if (map? v) (select-keys v [:checks :reward]) v)))))
(set! (.-__dvergrClj js/globalThis)
  #js {:keyword keyword
       :Keyword (type :k)
       :ArrayMap (type {})
       :symbol symbol
       :vec vec
       :list (fn [a] (apply list a))
       :set set
       :smallMap (fn [a] (apply array-map a))
       :bigMap (fn [a] (apply hash-map a))
       :uuid (fn [s] (clojure.edn/read-string (str "#uuid " (pr-str s))))
       :tagged (fn [t v] (tagged-literal (symbol t) v))
       :invoke (fn [f x] (f x))
       :isFn fn?
       :exCause ex-cause
       :errorInfo error-info
       :verdictText verdict-text
       :worldText (fn [v] (pr-str (if (map? v) (select-keys v [:files :gold]) v)))
       :requestsText (fn [v] (pr-str (if (sequential? v)
                                       (mapv #(if (map? %) (select-keys % [:id :prompt]) %) v)
                                       v)))})
(in-ns 'user)
`;

/** The JavaScript half of the glue; evaluates to `{prepare, run}`. */
export const GLUE_JS = `(function () {
  "use strict";
  const g = globalThis;
  const C = g.__dvergrClj;
  delete g.__dvergrClj;
  const scittle = g.scittle;
  const logs = g.__dvergrLogs;
  // Taken before any checker runs: a checker that replaces them (at load time, or in a
  // call) changes nothing the glue does.
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const toStr = String;
  const ErrorCtor = Error;
  const DateCtor = Date;
  const TypeErrorCtor = TypeError;
  const MathObj = Math;
  const imul = Math.imul;
  const defineProperty = Object.defineProperty;
  const finite = Number.isFinite;
  const call = Reflect.apply;
  const indexOf = String.prototype.indexOf;
  const Keyword = C.Keyword;
  const ArrayMap = C.ArrayMap;
  let found = null;

  const isError = (x) => {
    try { return x instanceof ErrorCtor; } catch (_) { return false; }
  };
  const text = (x) => {
    try { return toStr(x); } catch (_) { return "(a value that cannot be shown)"; }
  };

  function describe(e) {
    const chain = [];
    let cur = e;
    for (let n = 0; n < 8 && cur !== null && cur !== undefined; n++) {
      const d = { isError: isError(cur) };
      if (d.isError) {
        try { d.name = text(cur.name); d.message = text(cur.message); } catch (_) { /* getters */ }
      }
      try {
        const info = C.errorInfo(cur);
        for (const k of ["line", "column", "phase", "type", "data", "text"]) {
          if (info[k] !== null && info[k] !== undefined) d[k] = info[k];
        }
      } catch (_) { /* a value that cannot describe itself */ }
      chain[chain.length] = d;
      let next = null;
      try { next = C.exCause(cur); } catch (_) { next = null; }
      if ((next === null || next === undefined) && d.isError) {
        try { next = cur.cause; } catch (_) { next = null; }
      }
      cur = next;
    }
    return chain;
  }

  function answer(o) {
    const kept = [];
    for (let i = 0; i < logs.length && i < ${MAX_LOG_LINES}; i++) kept[i] = text(logs[i]);
    o.logs = kept;
    return stringify(o);
  }

  function prepare(source) {
    try {
      scittle.core.eval_string(source);
    } catch (e) {
      return answer({ error: describe(e), phase: "load" });
    }
    try {
      found = scittle.core.eval_string("(dvergr.sandbox/found-fns)");
    } catch (e) {
      return answer({ error: describe(e), phase: "load" });
    }
    logs.length = 0;
    return answer({
      ns: text(found.ns),
      check: found.hasCheck ? (C.isFn(found.check) ? "fn" : "value") : "none",
      judge: found.hasJudge ? (C.isFn(found.judge) ? "fn" : "value") : "none",
      generate: found.hasGenerate ? (C.isFn(found.generate) ? "fn" : "value") : "none",
    });
  }

  // A generate call draws its Math.random (and so rand) numbers from the world's seed, the
  // same ones every time (the call's restored snapshot drops this again).
  function reseed(tagged) {
    let seed = 0;
    for (let i = 1; i + 1 < tagged.length; i += 2) {
      const key = tagged[i];
      if (key && key[0] === "k" && key[2] === "seed" && finite(tagged[i + 1])) {
        seed = tagged[i + 1] | 0;
      }
    }
    defineProperty(MathObj, "random", {
      value: function random() {
        seed = (seed + 0x6d2b79f5) | 0;
        let t = seed;
        t = imul(t ^ (t >>> 15), t | 1);
        t ^= t + imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
      },
      writable: true,
      configurable: true,
    });
  }

  // What (keyword name) or (keyword ns name) builds from strings, without its checks; a
  // name with a slash (which (keyword name) splits) goes to keyword itself.
  function keyword(ns, name) {
    if (typeof name === "string") {
      if (ns === null && call(indexOf, name, ["/"]) < 0) return new Keyword(null, name, name, null);
      if (typeof ns === "string") return new Keyword(ns, name, ns + "/" + name, null);
    }
    return ns === null ? C.keyword(name) : C.keyword(ns, name);
  }

  // Whether the keys of a tagged map (at most 8, an even count of items) are strings,
  // numbers, booleans, nil or keywords and no two equal: array-map then keeps them all as
  // they are. A key of another kind answers false (array-map decides).
  function distinctKeys(x) {
    if ((x.length - 1) % 2 !== 0) return false;
    const ids = [];
    for (let i = 1; i < x.length; i += 2) {
      const k = x[i];
      let id;
      if (typeof k === "string") id = "s" + k;
      else if (typeof k === "number") id = "n" + k;
      else if (typeof k === "boolean") id = "b" + k;
      else if (k === null) id = "nil";
      else if (k[0] === "k" && typeof k[2] === "string" && (k[1] === null || typeof k[1] === "string")) {
        id = "k" + (k[1] === null ? k[2] : k[1] + "/" + k[2]);
      } else return false;
      for (let j = 0; j < ids.length; j++) if (ids[j] === id) return false;
      ids[ids.length] = id;
    }
    return true;
  }

  function decode(x) {
    if (x === null || typeof x !== "object") return x;
    const n = x.length;
    const items = (from) => {
      const a = [];
      for (let i = from; i < n; i++) a[i - from] = decode(x[i]);
      return a;
    };
    switch (x[0]) {
      case "k": return keyword(x[1], x[2]);
      case "y": return x[1] === null ? C.symbol(x[2]) : C.symbol(x[1], x[2]);
      case "v": return C.vec(items(1));
      case "l": return C.list(items(1));
      case "s": return C.set(items(1));
      case "m":
        if (n > 17) return C.bigMap(items(1));
        // What array-map builds from keys without a duplicate: the map over the array itself.
        return distinctKeys(x) ? new ArrayMap(null, (n - 1) / 2, items(1), null) : C.smallMap(items(1));
      case "i": return new DateCtor(x[1]);
      case "u": return C.uuid(x[1]);
      case "t": return C.tagged(x[1], decode(x[2]));
    }
    throw new TypeErrorCtor("not tagged JSON: " + toStr(x[0]));
  }

  function run(fn, inputJson) {
    let input;
    try {
      const tagged = parse(inputJson);
      if (fn === "generate") reseed(tagged);
      input = decode(tagged);
    } catch (e) {
      return answer({ error: describe(e), phase: "input" });
    }
    const f = fn === "check" ? found.check : fn === "generate" ? found.generate : found.judge;
    let result;
    try {
      result = C.invoke(f, input);
    } catch (e) {
      return answer({ error: describe(e), phase: "call" });
    }
    let printed;
    try {
      printed = fn === "check"
        ? C.verdictText(result)
        : fn === "generate"
        ? C.worldText(result)
        : C.requestsText(result);
    } catch (e) {
      return answer({ error: describe(e), phase: "result" });
    }
    return answer({ edn: text(printed) });
  }

  return { prepare, run };
})()`;
