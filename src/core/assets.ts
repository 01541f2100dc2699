/** Ledger assets and their precision (decisions §6a). Light on purpose: read on every path. */
export const ASSETS: Readonly<Record<string, { readonly decimals: number }>> = Object.freeze({
  USDT: Object.freeze({ decimals: 6 }),
});
