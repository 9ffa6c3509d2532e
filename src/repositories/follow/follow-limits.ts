/** Globs per list a request may set (API.md 12). */
export const MAX_GLOBS = 50;
/** A glob is at most as long as a ref name. */
export const MAX_GLOB_LENGTH = 255;
