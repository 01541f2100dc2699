/**
 * Rules for the texts a merchant or an operator names things with, without zod: the input
 * schemas (src/core/schemas.ts) use them, and so does `balance adjust`, which runs without
 * loading zod.
 */

/** C0 and C1 control characters and DEL: never part of an id, a user or a nonce (decisions §1). */
export const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
export const controlRefusal = (field: string) => `${field} must not contain control characters`;

/**
 * Characters that change how a text reads without being seen: every Unicode format character
 * (\p{Cf}: bidirectional controls such as U+202E, zero-width characters, U+FEFF, the soft
 * hyphen, the deprecated format controls U+206A-U+206F, annotation anchors, tag characters),
 * the line and paragraph separators, and the blanks that draw nothing (U+034F, the Hangul
 * fillers U+115F, U+1160, U+3164, U+FFA0). Never in an oid or a uid, which a payer reads on the
 * payment page and operators compare by eye (an outside review made the page show an oid
 * reversed; a code review found the first list too short). The joiners U+200C and U+200D,
 * which scripts and emoji need, are allowed, as is right-to-left text itself.
 */
export const HIDDEN = /(?![\u200c\u200d])[\p{Cf}\p{Zl}\p{Zp}\u034f\u115f\u1160\u3164\uffa0]/u;
export const hiddenRefusal = (field: string) =>
  `${field} must not contain invisible or direction-changing characters (such as U+202E or U+200B): people read it, on payment pages and in the CLI`;

/**
 * Blanks that make two ids read alike: one at the start or the end (`u1 ` and `u1`), and any
 * blank but the space (U+00A0, U+2003, U+3000...: `A-1` and `A-1<U+00A0>`). An outside review
 * made such twins, two users and two orders that no screen tells apart. Never in an oid or a
 * uid; a space between words is taken. Lookups are not narrowed: an id stored before answers.
 */
export const BLANKS = /^[\s\p{Zs}]|[\s\p{Zs}]$|(?! )\p{Zs}/u;
export const blankRefusal = (field: string) =>
  `${field} must not start or end with a blank, nor hold a blank other than the space (such as U+00A0): it would read like another ${field}`;

/**
 * A text the service sends back in the callbacks it signs (an order's oid and uid, a
 * withdrawal's uid, a refund's or a rejection's remark) holds no "&". The canonical string does
 * not escape it, and a merchant verifying a callback accepts any field names: from an oid
 * `Z&paidAmount=1000&paidAmountX=x`, an outside review made a second order.paid, with the same
 * signature, saying 1000 were paid where 1 was. With no "&" in any value, every "&" of a
 * callback's string is a boundary and the string has one reading (docs/decisions.md).
 */
export const isEchoable = (v: string) => !v.includes('&');
export const echoRefusal = (field: string) =>
  `${field} must not contain "&": it is sent back in signed callbacks, where it would let the callback be read as other fields under the same signature`;

/**
 * Why an operator's name (`--operator`, kept as the actor of the audit entries a CLI change
 * writes) is refused, or undefined. `api:<mchId>` and `chain:<chainId>` name the API and the
 * chain watcher there: a hand adjustment written as either would pass for a merchant's signed
 * request or a payment seen on chain (outside review).
 */
export function operatorRefusal(name: string): string | undefined {
  if (name.trim() === '') return '--operator must not be empty';
  if (/^\s*(api|chain):/i.test(name)) return '--operator must not start with api: or chain:, which name the API and the chain watcher in the audit log';
  if ([...name].length > 64) return '--operator must be at most 64 characters';
  // Plain ASCII without a colon: a look-alike (a Cyrillic а, a full-width colon, a zero-width
  // joiner between "api" and ":") would otherwise read as api:<mchId> (code review).
  if (!/^[A-Za-z0-9._@+ -]+$/.test(name)) return '--operator may hold only letters A-Z and a-z, digits, spaces and . _ @ + -';
  return undefined;
}
