/**
 * The checker runner port: runs a bundle's checker (JavaScript or Clojure) on an input and
 * gives its verdict or a fault, never a crash. Its contract is a kernel type
 * (core/checker.ts) that sandbox/ implements; named here beside the other ports.
 */
export type { CheckerCallOptions, CheckerRunner } from "../checker.ts";
