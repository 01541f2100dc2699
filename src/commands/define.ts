import type { Command } from 'commander';
import type { CommandRun } from '../main.js';

type Runner = (load: () => Promise<{ run: CommandRun }>) => (...args: unknown[]) => Promise<void>;

/**
 * Every command's line; the work of each command is imported only when that command runs, which
 * keeps start-up fast. The commands inside a group (`order create`, …) are defined only when
 * `wanted(group)` says the line may need them: `--help` lists the top-level commands alone, and
 * `order status` needs the order group alone, so neither builds the ~60 commands and their
 * options (~3 ms of a start). main.ts decides (argv.ts, groupsWanted); by default every group.
 */
export function defineCommands(program: Command, run: Runner, wanted: (group: string) => boolean = () => true): void {
  const fills: [string, () => void][] = [];
  const later = (group: string, fill: () => void) => fills.push([group, fill]);
  const merchant = program.command('merchant').description('merchants, their secrets and wallets (local ledger)');
  later('merchant', () => {
    merchant
      .command('add')
      .description('add a merchant; prints its mchId and secret once')
      .option('--name <name>', 'merchant name')
      .option('--evm-xpub <xpub>', "account xpub of m/44'/60'/0' for EVM addresses")
      .option('--tron-xpub <xpub>', "account xpub of m/44'/195'/0' for TRON addresses")
      .option('--generate-wallet', 'make a new BIP-39 wallet; its words are shown once and never stored')
      .option('--order-lifetime <duration>', 'default order lifetime, e.g. 30m, 2h', '30m')
      .option('--rate-limit <perMinute>', 'create-order requests per minute over HTTP, 0 for none', '60')
      .action(run(() => import('./merchant/add.js')));
    merchant.command('list').description('list merchants').action(run(() => import('./merchant/list.js')));
    merchant.command('show').argument('[mchId]').description('show one merchant').action(run(() => import('./merchant/show.js')));
    merchant
      .command('rotate-secret')
      .argument('[mchId]')
      .description('issue a new secret; the old one stops working at once')
      .action(run(() => import('./merchant/rotate-secret.js')));
    const payoutWallet = merchant.command('payout-wallet').description('the addresses the merchant pays out from: a payout verifies only when sent from one of them');
    payoutWallet.command('add').argument('<address>', 'an EVM (0x…) or TRON (T…) address').description('add a payout wallet').action(run(() => import('./merchant/payout-wallet.js').then((m) => ({ run: m.add }))));
    payoutWallet.command('remove').argument('<address>').description('remove a payout wallet').action(run(() => import('./merchant/payout-wallet.js').then((m) => ({ run: m.remove }))));
    payoutWallet.command('list').description("list the merchant's payout wallets").action(run(() => import('./merchant/payout-wallet.js').then((m) => ({ run: m.list }))));
  });
  const order = program.command('order').description('payment orders');
  later('order', () => {
    order
      .command('create')
      .description('create a payment order with fresh addresses')
      .option('--oid <oid>', 'merchant order number (unique per merchant)')
      .option('--uid <uid>', 'user id')
      .option('--amount <amount>', 'amount, a decimal such as 12.5')
      .option('--memo <text>', 'remark')
      .option('--expired-at <time>', 'expiry: a duration from now (2h, 30m), an ISO 8601 time (2026-05-01T12:00Z) or milliseconds since the epoch (default: now + order lifetime)')
      .option('--notify-url <url>', 'callback for payment results')
      .option('--redirect-url <url>', 'where the payment page sends the user afterwards')
      .option('--logo <url>', 'logo for the payment page')
      .option('--qr', 'also draw the QR code of each address in the terminal')
      .action(run(() => import('./order/create.js')));
    order.command('status').argument('<id>', 'an order id (ord_…), or the merchant order number (oid)').description("an order's status").action(run(() => import('./order/status.js')));
    order.command('show').argument('<id>', 'an order id (ord_…), or the merchant order number (oid)').description('everything about an order').action(run(() => import('./order/show.js')));
    order
      .command('find')
      .argument('<text>', "an order id, oid, uid, refund id (rf_…), withdrawal id (wd_…), transaction hash (any case, with or without 0x), deposit address or payer's address")
      .description('find orders by oid, uid, refund id, transaction hash, deposit address or payer (and a withdrawal by its id or the hash that pays it out)')
      .option('--limit <n>', 'at most this many orders', '50')
      .action(run(() => import('./order/find.js')));
    order
      .command('list')
      .description('list orders, newest first')
      .option('--status <status>', 'PENDING_PAY, PAID, EXPIRED or REFUNDED')
      .option('--uid <uid>', 'only this user')
      .option('--oid <oid>', 'only this merchant order number')
      .option('--since <time>', 'created at or after: 2024-05-01, 2024-05-01T14:30Z (UTC) or a duration back, e.g. 2h, 7d')
      .option('--until <time>', 'created before (same forms as --since)')
      .option('--limit <n>', 'at most this many', '50')
      .option('--cursor <id>', 'the page after this order (the id the previous page named)')
      .action(run(() => import('./order/list.js')));
    order
      .command('mark-paid')
      .argument('<id>', 'an order id (ord_…), or the merchant order number (oid)')
      .description('record a payment by hand (reconciliation); credits the user')
      .option('--tx-hash <hash>', 'the payment transaction')
      .option('--amount <amount>', 'amount received (default: what is still due; required once nothing is)')
      .option('--chain-type <type>', 'EVM or TRON')
      .option('--chain-id <id>', 'chain of the payment')
      .option('--token <address>', 'token contract of the payment')
      .option('--unverified', 'on a chain with an rpcUrl, record it without reading the chain (needs --reason)')
      .option('--reason <text>', 'why the chain is not read (kept in the audit log)')
      .action(run(() => import('./order/mark-paid.js')));
    order
      .command('held')
      .description('payments seen on chain more than 24 h after their order expired: held, not credited, until an operator decides')
      .option('--order <id|oid>', 'only this order')
      .action(run(() => import('./order/held.js')));
    order
      .command('credit-held')
      .argument('<id>', 'an order id (ord_…), or the merchant order number (oid)')
      .description("credit a held payment to the order's user (as a late payment)")
      .option('--tx-hash <hash>', 'the held payment\'s transaction')
      .option('--log-index <n>', 'its log index, when the transaction paid the order more than once')
      .option('--reason <text>', 'why (kept in the audit log)')
      .action(run(() => import('./order/credit-held.js')));
    order
      .command('return-held')
      .argument('<id>', 'an order id (ord_…), or the merchant order number (oid)')
      .description('record that a held payment was sent back to its payer (nothing was credited, so no balance moves)')
      .option('--tx-hash <hash>', 'the held payment\'s transaction')
      .option('--log-index <n>', 'its log index, when the transaction paid the order more than once')
      .option('--return-tx <hash>', 'the transaction that sent it back')
      .option('--reason <text>', 'why (kept in the audit log)')
      .action(run(() => import('./order/return-held.js')));
  });
  program.command('address').argument('<id>').description("an order's payment addresses").action(run(() => import('./address.js')));

  const refund = program
    .command('refund')
    .description('refund a paid order, in full or in part (an entry in the ledger: sends nothing on chain)')
    .option('--id <id>', 'order id')
    .option('--oid <oid>', 'merchant order number')
    .option('--amount <amount>', 'amount to refund')
    .option('--rest', 'refund all that remains (paid less refunded so far)')
    .option('--remark <text>', 'reason')
    .option('--repeat', 'a second refund of the same amount on the order within 10 minutes is meant (else it is refused as a repeat)')
    // Words after it are looked at by main's run (a mistyped `refund list`), not refused as extra.
    .allowExcessArguments(true)
    .action(run(() => import('./refund/create.js')));
  later('refund', () => {
    refund
      .command('list')
      .description('list refunds, newest first')
      .option('--order <id|oid>', 'only this order')
      .option('--limit <n>', 'at most this many', '50')
      .option('--cursor <id>', 'the page after this refund (the id the previous page named)')
      .action(run(() => import('./refund/list.js')));
  });
  const withdraw = program.command('withdraw').description('withdrawals: apply, then confirm or reject');
  later('withdraw', () => {
    withdraw
      .command('apply')
      .description("hold a user's funds for a payout")
      .option('--uid <uid>', 'user id')
      .option('--amount <amount>', 'amount')
      .option('--to <address>', 'target wallet address')
      .option('--chain-id <id>', 'chain, e.g. 1, 56, 137, 728126428')
      .option('--chain-type <type>', 'EVM or TRON')
      .option('--token <address>', 'token contract')
      .option('--notify-url <url>', 'callback for status updates')
      .action(run(() => import('./withdraw/apply.js')));
    withdraw
      .command('confirm')
      .argument('<logId>')
      .description('settle a pending withdrawal with its transaction')
      .option('--tx-hash <hash>', 'payout transaction hash')
      .option('--block-number <n>', 'block of the transaction')
      .option('--unverified', 'confirm without checking the chain (local ledger only; needs --reason)')
      .option('--reason <text>', 'why the chain is not checked (kept in the audit log)')
      .action(run(() => import('./withdraw/confirm.js')));
    withdraw
      .command('verify')
      .argument('<id>')
      .description("re-check a withdrawal's transaction against the chain and report (exit 1 when it does not match)")
      .option('--tx-hash <hash>', 'a transaction to check before confirming with it (default: the one the withdrawal records)')
      .option('--block-number <n>', 'the block to look for it in (default: the one its receipt names)')
      .action(run(() => import('./withdraw/verify.js')));
    withdraw
      .command('reject')
      .argument('<id>')
      .description('reject a pending withdrawal; the hold returns to the user (refused when the chain shows it paid out)')
      .option('--remark <text>', 'reason')
      .option('--unverified', 'reject without asking the chain whether it was paid out (local ledger only; needs --reason)')
      .option('--reason <text>', 'why the chain is not asked (kept in the audit log)')
      .action(run(() => import('./withdraw/reject.js')));
    withdraw
      .command('list')
      .description('list withdrawals, newest first')
      .option('--status <status>', 'PENDING, CONFIRMED or REJECTED')
      .option('--uid <uid>', 'only this user')
      .option('--since <time>', 'created at or after: 2024-05-01, 2024-05-01T14:30Z (UTC) or a duration back, e.g. 2h, 7d')
      .option('--until <time>', 'created before (same forms as --since)')
      .option('--limit <n>', 'at most this many', '50')
      .option('--cursor <id>', 'the page after this withdrawal (the id the previous page named)')
      .action(run(() => import('./withdraw/list.js')));
    withdraw.command('show').argument('<id>').description('one withdrawal').action(run(() => import('./withdraw/show.js')));
  });
  const balance = program
    .command('balance')
    .argument('<uid>')
    .description("a user's available and held balance")
    .option('--asset <asset>', 'asset (default: the merchant settlement asset)')
    .action(run(() => import('./balance/show.js')));
  later('balance', () => {
    balance
      .command('adjust')
      .argument('<uid>')
      .description('credit (+A) or debit (-A) a user by hand, with a reason')
      .option('--amount <amount>', 'signed amount, e.g. +5 or -2.5')
      .option('--reason <text>', 'why (kept in the audit log)')
      .option('--asset <asset>', 'asset (default: the merchant settlement asset)')
      .action(run(() => import('./balance/adjust.js')));
  });
  program
    .command('log')
    .description('the audit log, newest first; --follow prints new entries as they happen')
    .option('--order <id|oid>', 'only this order')
    .option('--withdrawal <id>', 'only this withdrawal')
    .option('--since <time>', 'at or after: 2024-05-01, 2024-05-01T14:30Z (UTC) or a duration back, e.g. 2h, 7d')
    .option('--until <time>', 'before (same forms as --since)')
    .option('--limit <n>', 'at most this many (default 50; with --follow, the last 10 first)')
    .option('--cursor <n>', 'the page after this entry (the number the previous page named)')
    .option('-f, --follow', 'then print each new entry as it is written, until Ctrl-C')
    .action(run(() => import('./log.js')));

  program
    .command('summary')
    .description('at a glance: pending withdrawals, today and this week, balances, chains, failed callbacks')
    .action(run(() => import('./summary.js')));

  const ledger = program.command('ledger').description('the ledger itself');
  later('ledger', () => {
    ledger.command('check').description('verify every invariant; exit 1 naming any violation').action(run(() => import('./ledger/check.js')));
    ledger
      .command('backup')
      .description('an online, consistent copy of the ledger, written 0600 and checked; never overwrites')
      .argument('<path>', 'a new file for the copy')
      .action(run(() => import('./ledger/backup.js')));
  });
  program
    .command('chains')
    .description('chains and tokens this service knows, and how far each is watched')
    .option('--ack-reorg <chainId>', 'acknowledge the deep reorg reported on this chain, after checking its payments (clears the warning; credits nothing back)')
    .option('--reason <text>', 'why, with --ack-reorg (kept in the audit log)')
    .action(run(() => import('./chains.js')));
  program
    .command('watch')
    .description('watch the chains for payments in the foreground (serve does this too, unless --no-watch)')
    .option('--chain <id>', 'only this chain (repeatable; default every chain with an rpcUrl)', (v: string, prev: string[] = []) => [...prev, v])
    .action(run(() => import('./watch.js')));

  program
    .command('serve')
    .description('serve the REST interface over HTTP')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port, 0 for any free one', '8080')
    .option('--max-connections <n>', 'open connections served at once; more are answered 503 (default 1000)')
    .option('--max-connections-per-client <n>', 'open connections of one client address (an IPv6 /64) at once; 0 for no cap, behind a proxy (default 100)')
    .option('--no-watch', 'do not watch the chains for payments')
    .option('--dev', 'development mode: a local anvil chain with a test USDT to pay on, and a development merchant on an empty ledger')
    .option('--public-url <url>', 'address payers reach this server at, for payUrl and the payment page (default: the address it listens on)')
    .option('--callback-schedule <delays>', 'retry delays of callbacks after each failed attempt (default 15s,1m,5m,15m,1h,3h,6h,12h,24h)')
    .option('--allow-private-callbacks', 'send callbacks to loopback and private addresses too (development; --dev sets it)')
    .action(run(() => import('./serve.js')));

  const dev = program.command('dev').description('the development sandbox of serve --dev (test money only)');
  later('dev', () => {
    dev
      .command('pay')
      .argument('<id>', 'an order id (ord_…), or the merchant order number (oid)')
      .description("send test USDT to an order's address on the development chain, from a funded test account")
      .option('--amount <amount>', 'amount to send (default: what the order still lacks)')
      .option('--from <n>', 'funded test account to pay from, 0 to 9', '1')
      .option('--wait [seconds]', 'then wait until the order is PAID (default 60 s)')
      .action(run(() => import('./dev/pay.js')));
    dev
      .command('pay-out')
      .argument('<withdrawal-id>', 'withdrawal id (wd_…)')
      .description("send a withdrawal's payout in test USDT on the development chain, from a funded test account; then record it with withdraw confirm")
      .option('--from <n>', 'funded test account to pay from, 0 to 9', '1')
      .action(run(() => import('./dev/pay-out.js')));
  });
  const callbacks = program.command('callbacks').description("callbacks to merchants' notifyUrl: list, show (local or remote); resend, test, run (local ledger)");
  later('callbacks', () => {
    callbacks
      .command('list')
      .description('list callbacks, newest first')
      .option('--status <status>', 'pending, delivered or failed')
      .option('--order <id|oid>', 'only this order')
      .option('--withdrawal <id>', 'only this withdrawal')
      .option('--limit <n>', 'at most this many', '50')
      .option('--cursor <id>', 'the page after this callback (the id the previous page named)')
      .action(run(() => import('./callbacks/list.js')));
    callbacks.command('show').argument('<id>').description('one callback with every attempt').action(run(() => import('./callbacks/show.js')));
    callbacks
      .command('resend')
      .argument('<id>')
      .description('a new attempt now, same eventId (its retry schedule starts over)')
      .option('--allow-private-callbacks', 'allow loopback and private addresses (development)')
      .action(run(() => import('./callbacks/resend.js')));
    callbacks
      .command('test')
      .description('send a sample signed event to a URL, once')
      .option('--url <url>', 'where to send it')
      .option('--event <name>', 'order.paid, order.expired, order.refunded, withdraw.confirmed or withdraw.rejected', 'order.paid')
      .option('--allow-private-callbacks', 'allow loopback and private addresses (development)')
      .action(run(() => import('./callbacks/test.js')));
    callbacks
      .command('run')
      .description('deliver callbacks in the foreground, where no serve runs')
      .option('--callback-schedule <delays>', 'retry delays after each failed attempt (default 15s,1m,5m,15m,1h,3h,6h,12h,24h)')
      .option('--allow-private-callbacks', 'send callbacks to loopback and private addresses too (development)')
      .action(run(() => import('./callbacks/run.js')));
  });
  program
    .command('listen')
    .description('receive callbacks here: verify each signature and print one line per event')
    .option('--port <port>', 'port on 127.0.0.1, 0 for any free one', '4242')
    .option('--forward-to <url>', 'also pass each verified callback on to this URL (your app), answering with its status')
    .action(run(() => import('./listen.js')));

  program
    .command('version')
    .description('this build, the ledger schema it writes, and the schema of the ledger in use (read only)')
    .action(run(() => import('./version.js')));
  program
    .command('completion')
    .argument('<shell>', 'bash, zsh or fish')
    .description('print shell completion for bash, zsh or fish, e.g. eval "$(cryptopay completion bash)"')
    .action(run(() => import('./completion.js')));

  const profile = program.command('profile').description('remote profiles: where operations go, as which merchant');
  later('profile', () => {
    profile
      .command('add')
      .argument('<name>')
      .description('save a remote profile (secret from CRYPTOPAY_SECRET, --secret-file, or asked for hidden)')
      .option('--url <url>', 'remote base URL (or the global --remote)')
      .option('--use', 'make it the active profile')
      .option('--no-check', 'save without checking the credentials against the server (offline setup; profile test checks later)')
      .action(run(() => import('./profile/add.js')));
    profile.command('list').description('list profiles (never their secrets)').action(run(() => import('./profile/list.js')));
    profile.command('show').argument('<name>').description('one profile: remote, merchant, where its secret comes from (never the secret)').action(run(() => import('./profile/show.js')));
    profile
      .command('test')
      .argument('[name]', 'the profile (default: the active one)')
      .description('check the profile against its server with one signed read: exit 0 accepted, 1 refused, 3 unreachable')
      .action(run(() => import('./profile/test.js')));
    profile
      .command('use')
      .argument('[name]')
      .description('make a profile the default for operations')
      .option('--none', 'no default profile: operations run on the local ledger')
      .action(run(() => import('./profile/use.js')));
    profile.command('remove').argument('<name>').description('delete a profile').action(run(() => import('./profile/remove.js')));
  });
  const sign = program
    .command('sign')
    .argument('[fields...]', 'body fields as key=value')
    .description('sign a request body (secret from CRYPTOPAY_SECRET, --secret-file or the profile in force)')
    .option('--body <json>', 'the body as JSON (default: key=value fields, else stdin)')
    .option('--fill', 'add timestamp and nonce (and mchId when given)')
    .option('--explain', 'also print the canonical string, secret redacted')
    .action(run(() => import('./sign/sign.js')));
  later('sign', () => {
    sign
      .command('verify')
      .argument('[fields...]', 'body fields as key=value, including sign')
      .description('check the sign field of a body')
      .option('--body <json>', 'the body as JSON (default: key=value fields, else stdin)')
      .option('--explain', 'also print the canonical string, secret redacted')
      .action(run(() => import('./sign/verify.js')));
  });
  // After every top-level command, so that `wanted` can tell a group's name from any other word.
  for (const [group, fill] of fills) if (wanted(group)) fill();
}
