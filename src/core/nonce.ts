/**
 * Decisions §1: 1-64 characters of A-Z a-z 0-9 _ . : - only. The canonical string does not
 * escape `&` or `=`, so a nonce that could hold them would let a captured body be re-split into
 * a "new" request under the same signature. Its own module: `cryptopay sign` checks it without
 * loading zod.
 */
export const NONCE_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/;
