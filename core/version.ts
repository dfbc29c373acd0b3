/** The program's version, printed by `--version` and written into exports. */
export const VERSION = "0.1.0";
