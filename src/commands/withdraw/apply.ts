import type { Context } from '../../context.js';
import { AppError, usage } from '../../core/errors.js';
import type { ChainInfo } from '../../chains/registry.js';
import type { Withdrawal } from '../../core/types.js';
import { checked, need } from '../common.js';
import type { Field } from '../fields.js';
import { printWithdrawal } from '../views.js';
import { serviceRegistry } from './asset.js';
import { sameAddress } from '../../core/words.js';

export async function run(ctx: Context, opts: Record<string, string | undefined>): Promise<void> {
  const given = (flag: string) => opts[flag.replace(/-(.)/g, (_, c: string) => c.toUpperCase())];
  // Every value given is checked first: a wrong flag is refused before the first question.
  for (const flag of ['uid', 'amount', 'chain-id', 'chain-type', 'to', 'token', 'notify-url']) checked(given(flag), flag);
  // Without a terminal a missing option is a usage error before anything is asked of a remote (a
  // review: a missing --uid read "cannot reach" with the remote down, and spent a nonce with it up).
  if (!ctx.io.interactive) {
    for (const flag of ['uid', 'amount', 'chain-id', 'to']) if (!given(flag)) throw usage(`missing required option --${flag}`);
  }
  // The service's chains: the ledger's, or a remote's own list when the chain is not built in or
  // is to be asked for (src/commands/withdraw/asset.ts).
  const { registry, fromService, unlisted } = await serviceRegistry(ctx, 'withdraw apply', opts.chainId || undefined);
  const known = (id: string): ChainInfo | undefined => registry.chains().find((c) => c.chainId === id);
  const whose = ctx.isRemote() ? 'the service' : 'this ledger';
  // Whether the service knows a chain or token is the service's to say (a refusal, exit 1, the
  // same locally and on a remote); a question on a terminal still refuses what the service does
  // not know, so that it can be asked again.
  const chainIdField: Field = {
    flag: 'chain-id',
    check: (v) => {
      if (!/^[1-9][0-9]{0,15}$/.test(v)) return `--chain-id must be a positive decimal integer such as 56, got ${JSON.stringify(v.slice(0, 40))}`;
      if (fromService && !known(v)) return `--chain-id ${v} is not a chain ${whose} knows (known: ${registry.chains().map((c) => c.chainId).join(', ')}${ctx.isRemote() ? '' : '; see cryptopay chains'})`;
      return undefined;
    },
  };
  // The chain decides its type, and its token when it has only one: nothing to ask about those.
  const chainGiven = opts.chainId !== undefined ? known(opts.chainId) : undefined;
  if (chainGiven && opts.chainType && opts.chainType.toUpperCase() !== chainGiven.chainType) {
    throw usage(`--chain-type ${opts.chainType} does not match --chain-id ${chainGiven.chainId} (${chainGiven.name} is ${chainGiven.chainType}); leave --chain-type out, it follows from the chain`);
  }

  const uid = await need(ctx, opts.uid, 'uid', 'User id');
  const amount = await need(ctx, opts.amount, 'amount', 'Amount');
  const chainId = await need(ctx, opts.chainId, opts.chainId === undefined ? chainIdField : 'chain-id', `Chain id (${registry.chains().map((c) => `${c.chainId} ${c.name}`).join(', ')})`);
  const chain = known(chainId);
  const knownIds = registry.chains().map((c) => c.chainId).join(', ');
  // The service's own list: a chain it does not know is its refusal at once (exit 1), not a
  // request for a type and a token that would then be refused.
  if (!chain && fromService) throw new AppError('invalid', `--chain-id ${chainId} is not a chain this service knows (known: ${knownIds})`);
  // A remote that could not say which chains it knows (a release before POST /api/v1/chains):
  // a chain it alone may know has no defaults here: say why, rather than a bare "missing
  // required option".
  const unknownChain = (flag: string) =>
    `missing required option ${flag}: chain ${chainId} is not one this command knows on a remote (built in: ${knownIds}), so its type and token do not follow from it; give --chain-type and --token (the service refuses a chain it does not know)${unlisted ? `. ${unlisted}` : ''}`;
  if (!chain && !ctx.io.interactive) {
    if (opts.chainType === undefined) throw usage(unknownChain('--chain-type'));
    if (opts.token === undefined) throw usage(unknownChain('--token'));
  }
  const chainType = (chain?.chainType ?? (await need(ctx, opts.chainType, 'chain-type', 'Chain type (EVM or TRON)')).toUpperCase()) as 'EVM' | 'TRON';
  const { validateAddress } = await import('../../chains/address.js');
  const toField: Field = {
    flag: 'to',
    check: (v) => {
      try {
        validateAddress(chainType, v, '--to');
        return undefined;
      } catch (e) {
        return (e as Error).message;
      }
    },
  };
  checked(opts.to, toField);
  const to = await need(ctx, opts.to, toField, `Target address (${chainType})`);
  const tokens = chain ? registry.tokens().filter((t) => t.chainId === chain.chainId) : [];
  const tokenField: Field = {
    flag: 'token',
    check: (v) => {
      if (tokens.length === 0 || !fromService) return v.length > 128 ? '--token must be at most 128 characters' : undefined;
      const key = (a: string) => (chainType === 'EVM' ? a.toLowerCase() : a);
      return tokens.some((t) => key(t.address) === key(v)) ? undefined : `--token ${v} is not a token of chain ${chainId} (known: ${tokens.map((t) => `${t.symbol} ${t.address}`).join(', ')})`;
    },
  };
  const token = opts.token ?? (tokens.length === 1 ? tokens[0]!.address : await need(ctx, undefined, tokenField, `Token contract${tokens.length ? ` (${tokens.map((t) => `${t.symbol} ${t.address}`).join(', ')})` : ''}`));
  const service = await ctx.service();
  const w = await service.applyWithdrawal({
    mchId: ctx.globals.mchId,
    uid,
    amount,
    to,
    chainId,
    chainType,
    token,
    notifyUrl: opts.notifyUrl,
  });
  await printWithdrawal(ctx, w);
  await noteTwin(ctx, service, w);
}

/** How far back a PENDING withdrawal with the same user, amount, address and chain reads as a repeat. */
const TWIN_WINDOW_MS = 10 * 60_000;

/**
 * A withdrawal just made that repeats one still PENDING (a double click, a shell retry: a
 * new-user trial made two 0.2 s apart, each holding the money) is said on stderr, with the
 * command that takes it back. Both stay: two equal payouts can be meant. A list that cannot be
 * read says nothing (the withdrawal is made either way).
 */
async function noteTwin(ctx: Context, service: Awaited<ReturnType<Context['service']>>, w: Withdrawal): Promise<void> {
  const same = (a: string, b: string) => sameAddress(w.chainType, a, b);
  const pending = await service.listWithdrawals({ mchId: ctx.globals.mchId, uid: w.uid, status: 'PENDING', limit: 50 }).catch(() => []);
  const twin = pending.find((p) => p.id !== w.id && p.amount === w.amount && p.chainId === w.chainId && same(p.to, w.to) && same(p.token, w.token) && w.createdAt - p.createdAt <= TWIN_WINDOW_MS);
  if (!twin) return;
  const seconds = Math.max(0, Math.round((w.createdAt - twin.createdAt) / 1000));
  ctx.io.stderr.write(`note: withdrawal ${twin.id} of user ${w.uid} for the same ${w.amount} to the same address on chain ${w.chainId} is PENDING too (applied ${seconds} s before this one): if this one is a repeat, reject it: cryptopay withdraw reject ${w.id}\n`);
}
