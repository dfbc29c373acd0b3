/**
 * A script evaluated in every fresh QuickJS context before checker.js that keeps the
 * checker's time limit enforceable.
 *
 * Why: QuickJS polls its interrupt handler from bytecode (loops, calls) but not inside
 * its native built-ins. A few built-ins loop up to an array-like's `length` without
 * allocating anything, so `Array.prototype.indexOf.call({length: 2 ** 53 - 1}, 1)` or
 * `new Set(Array.prototype.values.call({length: 2 ** 40}))` would run for days, and the
 * host cannot stop it: Deno 2.9's `worker.terminate()` does not stop a worker that is
 * busy (denoland/deno#35657), so the thread would burn a core until the process exits.
 * Built-ins that allocate as they go (spread, Array.from, JSON.stringify, typed arrays)
 * are already bounded by the memory cap.
 *
 * What it does, in plain JavaScript inside the sandbox:
 * - `Proxy` is wrapped so every proxy the checker makes is known (a WeakSet kept in a
 *   closure): a proxy can answer `length` differently each time it is asked;
 * - the Array.prototype methods that loop natively over `this` check its length first:
 *   a genuine array (not a proxy) whose length exceeds 2^24 is refused with a RangeError
 *   (no dense array that long fits in the memory cap); any other receiver is seen through
 *   a proxy that pins `length` to the value checked, so the native loop is bounded;
 * - `concat`, `flat` and `flatMap`, which also loop over their arguments or nested
 *   arrays, are written in JavaScript (bytecode, so interruptible);
 * - `next` of the array iterator prototype is wrapped, so native consumers of array
 *   iterators (the Set constructor, Iterator.prototype.drop, set methods) run JavaScript
 *   at every step and see the interrupt handler. `arguments[Symbol.iterator]` hands out
 *   the original `values`, whose iterators share that prototype.
 */
export const LOOP_GUARD_SOURCE = `(function () {
  "use strict";
  const g = globalThis;
  const ArrayProto = Array.prototype;
  const isArray = Array.isArray;
  const apply = Reflect.apply;
  const reflectGet = Reflect.get;
  const defineProperty = Object.defineProperty;
  const getPrototypeOf = Object.getPrototypeOf;
  const toObject = Object;
  const toNumber = Number;
  const floor = Math.floor;
  const OriginalProxy = Proxy;
  const originalRevocable = Proxy.revocable;
  const proxies = new WeakSet();
  const weakHas = WeakSet.prototype.has;
  const weakAdd = WeakSet.prototype.add;
  const isConcatSpreadable = Symbol.isConcatSpreadable;
  const RangeErrorType = RangeError;
  const TypeErrorType = TypeError;
  const MAX_LENGTH = 16777216;
  const MAX_SAFE = 9007199254740991;

  function setMethod(target, name, fn, length) {
    defineProperty(fn, "name", { value: name, configurable: true });
    defineProperty(fn, "length", { value: length, configurable: true });
    defineProperty(target, name, { value: fn, writable: true, configurable: true });
  }
  function register(p) {
    apply(weakAdd, proxies, [p]);
    return p;
  }
  function isProxy(o) {
    return apply(weakHas, proxies, [o]);
  }
  function toLength(v) {
    const n = toNumber(v);
    if (!(n > 0)) return 0;
    return n > MAX_SAFE ? MAX_SAFE : floor(n);
  }
  function tooLong(name, len) {
    return new RangeErrorType(
      "Array.prototype." + name + " refused a length of " + len +
        ": the sandbox allows at most " + MAX_LENGTH + " for sparse arrays and array-likes",
    );
  }
  function isObject(o) {
    return o !== null && (typeof o === "object" || typeof o === "function");
  }
  // A receiver whose length the native method will read exactly once, and that is small.
  function bounded(name, o) {
    if (!isObject(o)) return o;
    if (isArray(o) && !isProxy(o)) {
      if (o.length > MAX_LENGTH) throw tooLong(name, o.length);
      return o;
    }
    const len = toLength(o.length);
    if (len > MAX_LENGTH) throw tooLong(name, len);
    return register(new OriginalProxy(o, {
      __proto__: null,
      get: function (target, key) {
        return key === "length" ? len : reflectGet(target, key);
      },
    }));
  }

  setMethod(g, "Proxy", function Proxy(target, handler) {
    if (new.target === undefined) throw new TypeErrorType("Proxy must be called with new");
    return register(new OriginalProxy(target, handler));
  }, 2);
  setMethod(g.Proxy, "revocable", function revocable(target, handler) {
    const r = apply(originalRevocable, OriginalProxy, [target, handler]);
    register(r.proxy);
    return r;
  }, 2);

  const names = [
    "copyWithin", "every", "fill", "filter", "forEach", "includes", "indexOf", "join",
    "lastIndexOf", "map", "reduce", "reduceRight", "reverse", "shift", "slice", "some",
    "sort", "splice", "toLocaleString", "toString", "unshift",
  ];
  for (let i = 0; i < names.length; i++) {
    const name = names[i];
    const original = ArrayProto[name];
    if (typeof original !== "function") continue;
    setMethod(ArrayProto, name, {
      [name](...args) {
        return apply(original, bounded(name, this), args);
      },
    }[name], original.length);
  }

  function put(out, index, value) {
    defineProperty(out, index, { value: value, writable: true, enumerable: true, configurable: true });
  }
  function spreadable(o) {
    if (!isObject(o)) return false;
    const flag = o[isConcatSpreadable];
    return flag !== undefined ? !!flag : isArray(o);
  }
  setMethod(ArrayProto, "concat", function concat() {
    const out = [];
    let n = 0;
    for (let a = -1; a < arguments.length; a++) {
      const item = a < 0 ? toObject(this) : arguments[a];
      if (spreadable(item)) {
        const len = toLength(item.length);
        if (n + len > MAX_SAFE) throw new TypeErrorType("concat: the result would be too long");
        for (let k = 0; k < len; k++, n++) if (k in item) put(out, n, item[k]);
      } else {
        put(out, n++, item);
      }
    }
    out.length = n;
    return out;
  }, 1);

  function flatten(out, source, depth, mapper, thisArg) {
    const len = toLength(source.length);
    for (let k = 0; k < len; k++) {
      if (!(k in source)) continue;
      let el = source[k];
      if (mapper) el = apply(mapper, thisArg, [el, k, source]);
      if (depth > 0 && isArray(el)) flatten(out, el, depth - 1, undefined, undefined);
      else put(out, out.length, el);
    }
    return out;
  }
  setMethod(ArrayProto, "flat", function flat(depth) {
    const d = depth === undefined ? 1 : toNumber(depth);
    return flatten([], toObject(this), d > 0 ? floor(d) : 0, undefined, undefined);
  }, 0);
  setMethod(ArrayProto, "flatMap", function flatMap(mapper, thisArg) {
    if (typeof mapper !== "function") throw new TypeErrorType("flatMap: not a function");
    return flatten([], toObject(this), 1, mapper, thisArg);
  }, 1);

  const ArrayIteratorProto = getPrototypeOf([][Symbol.iterator]());
  const nativeNext = ArrayIteratorProto.next;
  setMethod(ArrayIteratorProto, "next", function next() {
    return apply(nativeNext, this, []);
  }, 0);
})();`;
