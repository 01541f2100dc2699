import type { Context } from '../../context.js';
import { ASSETS } from '../../core/assets.js';
import { AppError } from '../../core/errors.js';
import { formatAmount, parseLedgerAmount, toTokenUnits } from '../../core/money.js';
import { actForOwner } from '../owner.js';
import { printJson, printRecord } from '../output.js';
import { fundedAccount, sentRows } from './from.js';
import { shellQuote } from '../shell-quote.js';

/**
 * `cryptopay dev pay-out <withdrawal-id>`: sends a withdrawal's payout on the development chain of
 * `serve --dev`, from a funded test account, so that confirming it can be tried end to end (a
 * new-user trial had to write an ethers script to get a transaction to confirm). It only sends:
 * the operator records the payout with `withdraw confirm`, as with a real one, and the command
 * that does it is printed.
 */
export async function run(ctx: Context, opts: { from?: string }, id: string): Promise<void> {
  const from = fundedAccount(opts.from);
  const service = await ctx.local('dev pay-out');
  await actForOwner(ctx, { withdrawal: id });
  const w = await service.getWithdrawal(id, ctx.globals.mchId);
  if (w.status !== 'PENDING' || w.txHash !== null) {
    throw new AppError('conflict', `withdrawal ${w.id} is ${w.status}${w.txHash ? ` with transaction ${w.txHash}` : ''}: nothing to pay out; nothing was sent`);
  }
  const registry = await service.registry();
  const chain = registry.chain(w.chainId);
  if (!chain.development) {
    throw new AppError('conflict', `withdrawal ${w.id} pays out on chain ${chain.chainId} (${chain.name}), not on a development chain: dev pay-out sends test money only; pay it from the merchant's wallet and record it with cryptopay withdraw confirm; nothing was sent`);
  }
  if (!chain.rpcUrl) throw new AppError('unavailable', `the development chain ${chain.chainId} is not running: start cryptopay serve --dev on this ledger`);
  const token = registry.token(chain.chainId, w.token);
  const asset = token.asset;
  const assetDecimals = ASSETS[asset]!.decimals;
  const units = toTokenUnits(parseLedgerAmount(w.amount, assetDecimals), assetDecimals, token.decimals);
  // Sent once: a second run (a double click, a retry after a slow answer) would pay the address twice.
  const earlier = await service.payoutOnChain(w.id, ctx.globals.mchId);
  if (earlier && earlier.found.length > 0) {
    const f = earlier.found[0]!;
    const confirm = `${shellQuote(ctx.command())} --db ${shellQuote(service.ledger.path)} withdraw confirm ${w.id} --tx-hash ${f.txHash}`;
    throw new AppError('conflict', `withdrawal ${w.id} is paid out already: transaction ${f.txHash} (block ${f.blockNumber}) moved ${formatAmount(f.rawAmount, token.decimals)} ${asset} to ${w.to} after it was requested; nothing was sent. Record the payout with\n  ${confirm}`);
  }
  const { sendTestTokens } = await import('../../chains/sandbox/dev-pay.js');
  const sent = await sendTestTokens({ rpcUrl: chain.rpcUrl, chainId: Number(chain.chainId), token: token.address, to: w.to, units, from });
  // As serve --dev prints its commands: this CLI as it was run, on this ledger; the block is read from the chain.
  const confirm = `${shellQuote(ctx.command())} --db ${shellQuote(service.ledger.path)} withdraw confirm ${w.id} --tx-hash ${sent.txHash}`;
  const result = {
    withdrawal: w.id, chainId: chain.chainId, token: token.address, from: sent.from, to: w.to, amount: w.amount, asset,
    txHash: sent.txHash, blockNumber: sent.blockNumber, confirm,
  };
  if (ctx.globals.json) return printJson(ctx, result);
  await printRecord(ctx, [['withdrawal', w.id], ...sentRows(result)]);
  // Sent, not recorded: the withdrawal stays PENDING until the operator confirms it.
  ctx.io.stderr.write(`sent, not recorded: the withdrawal is still PENDING; record the payout with\n  ${confirm}\n`);
}
