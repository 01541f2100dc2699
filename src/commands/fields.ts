import type { z } from 'zod';
import { MAX_ORDER_AHEAD, missingDay } from '../core/duration.js';
import { parseAmount, parseSignedAmount } from '../core/money.js';
import { createOrderSchema, describeIssues, refundSchema, withdrawApplySchema } from '../core/schemas.js';
import { CONTROL, controlRefusal, HIDDEN, hiddenRefusal } from '../core/text-rules.js';

/**
 * The options a command asks for, each with the rule its value must meet (issue #15 items 6
 * and 7). The rule is the interface's own (the zod schema of the field, the amount grammar), so
 * a value typed as a flag and an answer typed at a prompt are judged alike and before anything
 * runs: a flag that breaks it is a usage error naming the flag (exit 2), an answer that breaks
 * it is refused where it was typed and asked again.
 */
export interface Field {
  /** The option, without its dashes: `expired-at`. */
  flag: string;
  /** The refusal, naming --flag, or undefined when the value is good. */
  check?: (value: string) => string | undefined;
}

/** zod's message names the interface's field ("oid must be …"): say the flag instead. */
const bySchema = (flag: string, schema: z.ZodType) => (v: string) => {
  const r = schema.safeParse(v);
  return r.success ? undefined : describeIssues(r.error).replace(/^[A-Za-z]+\b/, `--${flag}`);
};

const thrown = (f: () => unknown) => {
  try {
    f();
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
};

const TX_HASH = /^(0x)?[0-9a-fA-F]{64}$/;

const order = createOrderSchema.shape;

export const FIELDS: Record<string, Field> = {
  oid: { flag: 'oid', check: bySchema('oid', order.oid) },
  uid: { flag: 'uid', check: bySchema('uid', order.uid) },
  id: { flag: 'id', check: bySchema('id', refundSchema.shape.id) },
  amount: { flag: 'amount', check: (v) => thrown(() => parseAmount(v, 6, '--amount')) },
  memo: { flag: 'memo', check: bySchema('memo', order.memo) },
  'notify-url': { flag: 'notify-url', check: bySchema('notify-url', order.notifyUrl) },
  'redirect-url': { flag: 'redirect-url', check: bySchema('redirect-url', order.redirectUrl) },
  logo: { flag: 'logo', check: bySchema('logo', order.logo) },
  remark: { flag: 'remark', check: bySchema('remark', refundSchema.shape.remark) },
  to: { flag: 'to', check: bySchema('to', withdrawApplySchema.shape.to) },
  token: { flag: 'token', check: bySchema('token', withdrawApplySchema.shape.token) },
  'chain-id': { flag: 'chain-id', check: (v) => (/^[1-9][0-9]{0,15}$/.test(v) ? undefined : `--chain-id must be a positive decimal integer such as 56, got ${JSON.stringify(v.slice(0, 40))}`) },
  'chain-type': { flag: 'chain-type', check: (v) => (/^(evm|tron)$/i.test(v) ? undefined : '--chain-type must be EVM or TRON') },
  'tx-hash': { flag: 'tx-hash', check: (v) => (TX_HASH.test(v) ? undefined : '--tx-hash must be a transaction hash: 0x and 64 hex digits (EVM), or 64 hex digits (TRON)') },
  'return-tx': { flag: 'return-tx', check: (v) => (TX_HASH.test(v) ? undefined : '--return-tx must be a transaction hash: 0x and 64 hex digits (EVM), or 64 hex digits (TRON)') },
  'block-number': {
    flag: 'block-number',
    // What the service takes exactly (a JSON number past 2^53 - 1 is not one): named here, once.
    check: (v) => (/^[1-9][0-9]{0,15}$/.test(v) && Number.isSafeInteger(Number(v)) ? undefined : `--block-number must be a positive whole number, at most ${Number.MAX_SAFE_INTEGER}`),
  },
  reason: {
    flag: 'reason',
    // Kept in the audit log, which operators read in a terminal: no control or hidden characters.
    check: (v) => (v.trim() === '' ? '--reason is required: say why (it is kept in the audit log)'
      : v.length > 256 ? '--reason must be at most 256 characters'
        : CONTROL.test(v) ? controlRefusal('--reason')
          : HIDDEN.test(v) ? hiddenRefusal('--reason') : undefined),
  },
  name: { flag: 'name', check: (v) => (v.trim() === '' || v.length > 100 ? '--name must be 1 to 100 characters' : undefined) },
};

/**
 * balance adjust: "+5" credits, "-2.5" debits. The sign is required: "5" was taken as a credit,
 * so a debit whose "-" was forgotten credited the user (an integrator review).
 */
export const SIGNED_AMOUNT: Field = {
  flag: 'amount',
  check: (v) =>
    thrown(() => parseSignedAmount(v, 6, '--amount')) ??
    (/^[+-]/.test(v) ? undefined : `--amount needs its sign: +${v} credits the user, -${v} debits (without one, a forgotten "-" would credit)`),
};

/** The field a flag names, when it has a rule; a flag without one is taken as typed. */
export const fieldOf = (flag: string): Field => FIELDS[flag] ?? { flag };

/**
 * A time option: a duration from now (`2h`, `30m`, `90s`, `1d`), milliseconds since the epoch,
 * or an ISO 8601 time with its zone (`2026-05-01T12:00Z`). Returns milliseconds since the epoch.
 */
/** A time given as a duration from now (2h, 30m): worked out again at every run. */
const FROM_NOW = /^(\d{1,7})(s|m|h|d)$/;
export const isFromNow = (value: string): boolean => FROM_NOW.test(value.trim());

export function parseTime(value: string, now: number, flag: string): number | string {
  const d = FROM_NOW.exec(value.trim());
  if (d) return now + Number(d[1]) * { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[d[2] as 's' | 'm' | 'h' | 'd'];
  if (/^\d{1,16}$/.test(value)) return Number(value);
  const missing = missingDay(value);
  if (missing) return `--${flag} names a day that does not exist: ${missing}`;
  if (/^\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)$/i.test(value) && !Number.isNaN(Date.parse(value))) return Date.parse(value);
  return `--${flag} must be a duration from now such as 2h or 30m, milliseconds since the epoch, or an ISO 8601 time with its zone such as 2026-05-01T12:00Z`;
}

/** --expired-at: a time in the future, at most 7 days ahead (decisions §3). */
export function expiry(value: string, now: number): number | string {
  const t = parseTime(value, now, 'expired-at');
  if (typeof t === 'string') return t;
  if (t <= now) return `--expired-at must lie in the future (${value} is ${new Date(t).toISOString()})`;
  if (t > now + MAX_ORDER_AHEAD) return `--expired-at must be at most 7 days ahead (${value} is ${new Date(t).toISOString()})`;
  return t;
}
