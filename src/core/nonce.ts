/**
 * Decisions §1: a signed request's (and a callback's) timestamp is accepted within 5 minutes of
 * the receiver's clock, either way.
 */
export const TIMESTAMP_WINDOW_MS = 5 * 60_000;

/**
 * Decisions §1: 1-64 characters of A-Z a-z 0-9 _ . : - only. The canonical string does not
 * escape `&` or `=`, so a nonce that could hold them would let a captured body be re-split into
 * a "new" request under the same signature. Its own module: `cryptopay sign` checks it without
 * loading zod.
 */
export const NONCE_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/;
