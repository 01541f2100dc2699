/**
 * Rules for the texts a merchant or an operator names things with, without zod: the input
 * schemas (src/core/schemas.ts) use them, and so does `balance adjust`, which runs without
 * loading zod.
 */

/** C0 and C1 control characters and DEL: never part of an id, a user or a nonce (decisions §1). */
export const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
export const controlRefusal = (field: string) => `${field} must not contain control characters`;

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
