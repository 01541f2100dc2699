/**
 * The account xpubs (m/44'/60'/0' and m/44'/195'/0') of the public anvil test mnemonic, the
 * wallet `serve --dev` gives its development merchant (src/commands/serve-dev.ts). Anyone can
 * spend what its addresses receive, so the payment page of such a merchant's order says "test
 * money only" and lists development chains only, whatever chains the server knows.
 * test/server/pay-page.test.ts checks them against the mnemonic's own derivation.
 */
export const PUBLIC_TEST_XPUBS = Object.freeze({
  EVM: 'xpub6Ce9NcJvTk36xtLSrJLZqE7wtgA5deCeYs7rSQtreh4cj6ByPtrg9sD7V2FNFLPnf8heNP3FGkeV9qwfzvZNSd54JoNXVsXFYSYwHsnJxqP',
  TRON: 'xpub6BuRy7ZmkGfP2RWhoor1kWB1w9DvrtmJbFBvnC1bQ4SB5NbCHTyQYCJSXZtxDbFyHTmC7wkU2he3nYYdpZ3Vf6qUAkXSnL6RPif4BDtDEKr',
});
