import { AppError } from './errors.js';

/**
 * Amounts travel as decimal strings and live as bigint base units (decisions §2). Never a float.
 */
const AMOUNT = /^(\d+)(?:\.(\d+))?$/;

/** The form an amount must have on the wire (parseAmount checks the places against the asset too). */
export const isPlainAmount = (v: unknown): boolean => typeof v === 'string' && AMOUNT.test(v);

/**
 * The refusal of an amount that is not a string. A JSON number is said to be one, with the string
 * to send when its text is a plain decimal of at most 15 significant digits (`1.5`, not `1e+21`
 * nor a float's `0.30000000000000004`): "must be a decimal string"
 * alone left a trial's integrator to work out that the quotes were what was missing.
 */
export function notAmountString(value: unknown, field = 'amount'): string {
  const head = `${field} must be a decimal string such as "10.5"`;
  if (typeof value === 'number') {
    const text = String(value);
    if (!AMOUNT.test(text)) return `${head}, not a JSON number`;
    // A double keeps 15 significant digits exactly; more are a float's (0.1 + 0.2 is sent as
    // 0.30000000000000004), and echoing them would suggest an amount nobody meant.
    const significant = text.replace('.', '').replace(/^0+/, '').replace(/0+$/, '').length;
    if (significant > 15) return `${head}, not a JSON number (${text} has more than the 15 significant digits a JSON number is sure to keep: send the amount meant, as a string)`;
    return `${head}, not a JSON number: send "${text}" (in quotes)`;
  }
  if (typeof value === 'boolean') return `${head}, not a JSON boolean`;
  return head;
}

/**
 * Whether two amounts as written are the same number ("2", "2.00" and "02" are), whatever their
 * size and places: false when either is not a plain decimal. No bound applies: an operator
 * trial's refunds of 10 and more were compared as 18-place amounts, whose bound is 9.22 of them,
 * and never matched.
 */
export function sameAmount(a: string, b: string): boolean {
  const canonical = (x: string) => {
    const m = AMOUNT.exec(x);
    if (!m) return undefined;
    return `${m[1]!.replace(/^0+(?=\d)/, '')}.${(m[2] ?? '').replace(/0+$/, '')}`;
  };
  const ca = canonical(a);
  return ca !== undefined && ca === canonical(b);
}

/** The largest amount one operation may carry, in whole units of the asset. */
export const MAX_WHOLE_UNITS = 1_000_000_000_000n;

/**
 * The largest amount the ledger can hold anywhere, in base units: SQLite integers are signed 64-bit
 * and a sum past them silently becomes a float. Every balance, total and amount stays within
 * ±MAX_LEDGER_AMOUNT (issue #10 item 10).
 */
export const MAX_LEDGER_AMOUNT = 2n ** 63n - 1n;

/** The refusal for a change that would take `what` past the ledger's range. */
export function tooLarge(what: string, value: bigint, decimals: number): string {
  return `${what} would be ${formatAmount(value, decimals)}, outside what the ledger can hold (±${formatAmount(MAX_LEDGER_AMOUNT, decimals)}): refused, nothing was changed`;
}

/**
 * An amount's form, whatever its asset: a plain decimal string, else refused. Its whole and
 * fractional digits; parseAmount checks them against the asset's places and the bound.
 */
export function plainAmountParts(value: unknown, field = 'amount'): { whole: string; frac: string } {
  if (typeof value !== 'string') throw new AppError('invalid', notAmountString(value, field));
  const m = AMOUNT.exec(value);
  if (!m) {
    throw new AppError(
      'invalid',
      `${field} must be a plain decimal such as "10.5" (digits, then optionally a point and more digits: 0.5, not .5; no sign, exponent, spaces or separators), got ${JSON.stringify(value.slice(0, 40))}`,
    );
  }
  return { whole: m[1]!, frac: m[2] ?? '' };
}

export function parseAmount(value: unknown, decimals: number, field = 'amount'): bigint {
  const { whole, frac } = plainAmountParts(value, field);
  // "1.0000000" is refused too: more places than the asset has is a mistake, zeros or not.
  if (frac.length > decimals) {
    throw new AppError('invalid', `${field} has more than ${decimals} decimal places`);
  }
  // The smaller of the two bounds is the one an amount meets, and the one every refusal names:
  // naming the ledger's integer for an amount past both sent a client below it, into the other.
  const scale = 10n ** BigInt(decimals);
  const wholeCap = MAX_WHOLE_UNITS * scale;
  const cap = wholeCap < MAX_LEDGER_AMOUNT ? wholeCap : MAX_LEDGER_AMOUNT;
  const tooLarge = () => new AppError('invalid', `${field} must not exceed ${formatAmount(cap, decimals)}`);
  if (whole.replace(/^0+/, '').length > 13) throw tooLarge();
  const units = BigInt(whole) * scale + BigInt(frac.padEnd(decimals, '0') || '0');
  if (units === 0n) throw new AppError('invalid', `${field} must be positive`);
  if (units > cap) throw tooLarge();
  return units;
}

/** Canonical form: no leading zeros, no trailing fractional zeros ("010.50" -> "10.5"). */
export function formatAmount(units: bigint, decimals: number): string {
  const negative = units < 0n;
  const abs = negative ? -units : units;
  const scale = 10n ** BigInt(decimals);
  const whole = abs / scale;
  const frac = (abs % scale).toString().padStart(decimals, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${frac ? `.${frac}` : ''}`;
}

/** A signed amount for operator adjustments: "+5", "-2.5" or "5". */
export function parseSignedAmount(value: string, decimals: number, field = 'amount'): bigint {
  const negative = value.startsWith('-');
  const body = negative || value.startsWith('+') ? value.slice(1) : value;
  // Its form is refused in words that allow the sign (the plain one says "no sign").
  if (!AMOUNT.test(body)) {
    throw new AppError(
      'invalid',
      `${field} must be a sign and a plain decimal such as "+10.5" or "-2" (digits, then optionally a point and more digits: +0.5, not +.5; no exponent, spaces or separators), got ${JSON.stringify(value.slice(0, 40))}`,
    );
  }
  const units = parseAmount(body, decimals, field);
  return negative ? -units : units;
}

/**
 * A balance or total as the ledger printed it ("-12.5", "9223372036854.775807"): signed and bounded
 * only by the ledger's range, not by the 10^12 cap on one operation's amount. For reading back
 * what the service answered, never for input.
 */
export function parseLedgerAmount(value: string, decimals: number): bigint {
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(value);
  if (!m || (m[3] ?? '').length > decimals) throw new AppError('internal', `not a ledger amount: ${JSON.stringify(value.slice(0, 40))}`);
  const units = BigInt(m[2]!) * 10n ** BigInt(decimals) + BigInt((m[3] ?? '').padEnd(decimals, '0') || '0');
  if (units > MAX_LEDGER_AMOUNT) throw new AppError('internal', `not a ledger amount: ${value} is out of range`);
  return m[1] ? -units : units;
}

/**
 * An amount in an asset's base units as a token of that asset counts it: USDT (6 places) on an
 * 18-decimal token has 12 more places. Exact whenever the amount has no finer places than the
 * token, which every operation that sends it checks first.
 */
export function toTokenUnits(units: bigint, assetDecimals: number, tokenDecimals: number): bigint {
  return tokenDecimals >= assetDecimals ? units * 10n ** BigInt(tokenDecimals - assetDecimals) : units / 10n ** BigInt(assetDecimals - tokenDecimals);
}

/** What an order still waits for, in base units (0 or less: nothing), from its amounts as views print them. */
export function amountDue(order: { amount: string; paidAmount: string }, decimals: number): bigint {
  return parseLedgerAmount(order.amount, decimals) - parseLedgerAmount(order.paidAmount, decimals);
}
