/**
 * The one error type of cryptopay. Every refusal carries a kind from a closed set; the HTTP
 * status and the CLI exit code are looked up from the kind in exactly one table each.
 */
export type ErrorKind =
  | 'invalid' // malformed or out-of-bound input
  | 'unauthorized' // signature, timestamp or nonce refused
  | 'not_found'
  | 'conflict' // the current state forbids the operation
  | 'rate_limited'
  | 'too_large'
  | 'usage' // the command line itself is wrong (CLI only)
  | 'unavailable' // the ledger or the remote cannot be reached
  | 'internal';

export class AppError extends Error {
  readonly kind: ErrorKind;
  /** Seconds, for rate_limited. */
  readonly retryAfter?: number;
  /**
   * What a person should check, said after the message on a terminal; not part of the message,
   * which stays the interface's own words (--json, the contract with a remote).
   */
  readonly hint?: string;
  /**
   * What an HTTP client reads instead of the message, when the message holds what only the
   * operator may read (a chain node's address: an address inside the service's network for a
   * node of its own). serve logs the message itself for the operator.
   */
  readonly shown?: string;

  constructor(kind: ErrorKind, message: string, options?: { retryAfter?: number; cause?: unknown; hint?: string; shown?: string }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.kind = kind;
    if (options?.retryAfter !== undefined) this.retryAfter = options.retryAfter;
    if (options?.hint !== undefined) this.hint = options.hint;
    if (options?.shown !== undefined) this.shown = options.shown;
  }
}

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;

export const httpStatusOf: Record<ErrorKind, number> = {
  invalid: 400,
  usage: 400,
  unauthorized: 401,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
};

/** Exit codes of decisions §10: 1 refused, 2 usage, 3 ledger or remote unreachable. */
export const exitCodeOf: Record<ErrorKind, number> = {
  invalid: 1,
  unauthorized: 1,
  not_found: 1,
  conflict: 1,
  too_large: 1,
  rate_limited: 1,
  internal: 1,
  usage: 2,
  unavailable: 3,
};

/** The inverse of httpStatusOf, for the remote client reading an error envelope. */
export function kindOfHttpStatus(status: number): ErrorKind {
  switch (status) {
    case 400: return 'invalid';
    case 401: return 'unauthorized';
    case 404: return 'not_found';
    case 409: return 'conflict';
    case 413: return 'too_large';
    case 429: return 'rate_limited';
    case 503: return 'unavailable';
    default: return status >= 500 ? 'internal' : 'invalid';
  }
}

export const invalid = (msg: string) => new AppError('invalid', msg);
export const notFound = (msg: string) => new AppError('not_found', msg);
export const conflict = (msg: string) => new AppError('conflict', msg);
export const usage = (msg: string) => new AppError('usage', msg);

const FILE_PROBLEMS: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'it is a directory, not a file',
  ENOTDIR: 'a part of its path is not a directory',
  ELOOP: 'too many symbolic links',
  ENAMETOOLONG: 'the name is too long',
};

/** Why a file could not be read, in words (the errno code kept for a search: "no such file (ENOENT)"). */
export function fileProblem(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  if (!code) return 'error';
  const words = FILE_PROBLEMS[code];
  return words ? `${words} (${code})` : code;
}
