import type { Command, Option } from 'commander';

/**
 * What `--help` adds to each command's line (issue #15 item 6): which options are required (a
 * missing one is asked for on a terminal, a usage error elsewhere, so commander's own
 * requiredOption, which refuses at once, does not fit) and examples for every command. Kept
 * beside define.ts, keyed by the command's path, so defining a command stays one readable block.
 */
const REQUIRED: Record<string, Record<string, string>> = {
  'merchant add': { name: 'required' },
  'order create': { oid: 'required', uid: 'required', amount: 'required' },
  'order mark-paid': { 'tx-hash': 'required' },
  'order credit-held': { 'tx-hash': 'required', reason: 'required' },
  'order return-held': { 'tx-hash': 'required', reason: 'required' },
  refund: { id: 'required unless --oid', oid: 'required unless --id', amount: 'required unless --rest' },
  'withdraw apply': { uid: 'required', amount: 'required', to: 'required', 'chain-id': 'required', 'chain-type': 'default: the chain\'s', token: 'default: the chain\'s token, when it has one' },
  'withdraw confirm': { 'tx-hash': 'required', 'block-number': 'default: read from the chain; required with --unverified or a chain without rpcUrl' },
  'balance adjust': { amount: 'required', reason: 'required' },
  'profile add': { url: 'required unless --remote' },
};

const EXAMPLES: Record<string, string[]> = {
  '': ['cryptopay merchant add --name "My shop" --generate-wallet', 'cryptopay order create --oid A-1 --uid user-1 --amount 12.5', 'cryptopay withdraw list --status PENDING', 'cryptopay help order create'],
  merchant: ['cryptopay merchant add --name "My shop" --generate-wallet', 'cryptopay merchant list'],
  'merchant add': ['cryptopay merchant add --name "My shop" --generate-wallet', 'cryptopay merchant add --name Shop --evm-xpub xpub6C... --tron-xpub xpub6D... --order-lifetime 2h'],
  'merchant list': ['cryptopay merchant list', 'cryptopay merchant list --format csv > merchants.csv'],
  'merchant show': ['cryptopay merchant show M100001'],
  'merchant rotate-secret': ['cryptopay merchant rotate-secret M100001'],
  order: ['cryptopay order create --oid A-1 --uid user-1 --amount 12.5', 'cryptopay order list --status PAID'],
  'order create': ['cryptopay order create --oid A-1 --uid user-1 --amount 12.5', 'cryptopay order create --oid A-2 --uid user-1 --amount 5 --expired-at 2h --memo "gift card" --qr'],
  'order status': ['cryptopay order status ord_...', 'cryptopay order status A-1   # the merchant order number'],
  'order show': ['cryptopay order show ord_...', 'cryptopay order show A-1 --mch-id M100001', 'cryptopay --json order show ord_...'],
  'order find': ['cryptopay order find user-1', 'cryptopay order find 0xAB12...   # a transaction hash, any case, with or without 0x', 'cryptopay order find TR7NHq...   # a deposit address'],
  'order list': ['cryptopay order list --status PENDING_PAY --limit 20', 'cryptopay order list --since 2h', 'cryptopay order list --since 2024-05-01 --until 2024-05-08 --oid A-1', 'cryptopay order list --cursor ord_...   # the next page', 'cryptopay order list --uid user-1 --format csv > orders.csv'],
  'order mark-paid': ['cryptopay order mark-paid ord_... --tx-hash 0x<64 hex> --chain-id <the chain it was paid on> --yes   # read there first', 'cryptopay order mark-paid ord_... --tx-hash 0x<64 hex> --amount 10 --unverified --reason "node down; seen on the explorer" --yes', 'cryptopay order mark-paid ord_... --tx-hash <64 hex> --amount 10 --chain-type TRON --chain-id 728126428'],
  'order held': ['cryptopay order held', 'cryptopay order held --order ord_...'],
  'order credit-held': ['cryptopay order credit-held ord_... --tx-hash 0x<64 hex> --reason "customer confirmed the late payment"'],
  'order return-held': ['cryptopay order return-held ord_... --tx-hash 0x<64 hex> --return-tx 0x<64 hex> --reason "sent back on request"'],
  address: ['cryptopay address ord_...'],
  refund: ['cryptopay refund --id ord_... --amount 2.5 --remark damaged', 'cryptopay refund --oid A-1 --amount 12.5 --yes', 'cryptopay refund --oid A-1 --rest   # all that remains'],
  'refund list': ['cryptopay refund list', 'cryptopay refund list --order A-1'],
  withdraw: ['cryptopay withdraw list --status PENDING', 'cryptopay withdraw confirm wd_... --tx-hash 0x<64 hex>'],
  'withdraw apply': ['cryptopay withdraw apply --uid user-1 --amount 10 --chain-id 1 --to 0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', 'cryptopay withdraw apply --uid user-1 --amount 10 --chain-id 728126428 --to T...'],
  'withdraw confirm': ['cryptopay withdraw confirm wd_... --tx-hash 0x<64 hex>   # the block is read from the chain', 'cryptopay withdraw confirm wd_... --tx-hash 0x<64 hex> --block-number 19000000', 'cryptopay withdraw confirm wd_... --tx-hash 0x<64 hex> --block-number 19000000 --unverified --reason "node down, checked on etherscan"'],
  'withdraw verify': ['cryptopay withdraw verify wd_...', 'cryptopay withdraw verify wd_... --tx-hash 0x<64 hex>   # before confirming with it'],
  'withdraw reject': ['cryptopay withdraw reject wd_... --remark "address on a sanctions list"'],
  'withdraw list': ['cryptopay withdraw list --status PENDING', 'cryptopay withdraw list --since 7d', 'cryptopay withdraw list --uid user-1 --format csv > withdrawals.csv'],
  'withdraw show': ['cryptopay withdraw show wd_...'],
  balance: ['cryptopay balance user-1', 'cryptopay balance user-1 --json'],
  'balance adjust': ['cryptopay balance adjust user-1 --amount +5 --reason "goodwill credit, ticket 1234"', 'cryptopay balance adjust user-1 --amount -2.5 --reason "duplicate credit"'],
  log: ['cryptopay log --limit 20', 'cryptopay log --order A-1', 'cryptopay log --since 1d', 'cryptopay log --follow', 'cryptopay log --format csv > audit.csv'],
  summary: ['cryptopay summary', 'cryptopay summary --mch-id M100001 --json'],
  ledger: ['cryptopay ledger check', 'cryptopay ledger backup ./backup.db'],
  'ledger check': ['cryptopay ledger check'],
  'ledger backup': ['cryptopay ledger backup ./backup-$(date +%F).db'],
  chains: ['cryptopay chains', 'cryptopay chains --json', 'cryptopay chains --ack-reorg 1 --reason "payments of blocks 19000000-19000012 checked on etherscan"'],
  watch: ['cryptopay watch', 'cryptopay watch --chain 1 --chain 56'],
  serve: ['cryptopay serve', 'cryptopay serve --dev', 'cryptopay serve --host 0.0.0.0 --port 8080 --public-url https://pay.example.com'],
  dev: ['cryptopay dev pay ord_... --wait'],
  'dev pay': ['cryptopay dev pay ord_...', 'cryptopay dev pay ord_... --amount 1 --wait 30'],
  'merchant payout-wallet': ['cryptopay merchant payout-wallet add 0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', 'cryptopay merchant payout-wallet list'],
  'merchant payout-wallet add': ['cryptopay merchant payout-wallet add 0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed --mch-id M100001', 'cryptopay merchant payout-wallet add TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'],
  'merchant payout-wallet remove': ['cryptopay merchant payout-wallet remove 0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'],
  'merchant payout-wallet list': ['cryptopay merchant payout-wallet list --mch-id M100001', 'cryptopay --json merchant payout-wallet list'],
  'dev pay-out': ['cryptopay dev pay-out wd_...', 'cryptopay --json dev pay-out wd_... --from 2'],
  callbacks: ['cryptopay callbacks list --status failed', 'cryptopay callbacks resend evt_...'],
  'callbacks list': ['cryptopay callbacks list --status failed', 'cryptopay callbacks list --order ord_... --format csv > callbacks.csv'],
  'callbacks show': ['cryptopay callbacks show evt_...'],
  'callbacks resend': ['cryptopay callbacks resend evt_...'],
  'callbacks test': ['cryptopay callbacks test --url https://shop.example.com/hooks/pay --event order.paid'],
  'callbacks run': ['cryptopay callbacks run'],
  listen: ['cryptopay listen', 'cryptopay listen --port 4242 --forward-to http://127.0.0.1:3000/hooks/pay'],
  version: ['cryptopay version', 'cryptopay version --json'],
  completion: ['eval "$(cryptopay completion bash)"', 'cryptopay completion fish > ~/.config/fish/completions/cryptopay.fish'],
  profile: ['cryptopay profile add prod --remote https://pay.example.com --mch-id M100001 --use', 'cryptopay profile list'],
  'profile add': ['cryptopay profile add prod --url https://pay.example.com --mch-id M100001 --use   # asks for the secret, hidden'],
  'profile list': ['cryptopay profile list'],
  'profile show': ['cryptopay profile show prod'],
  'profile test': ['cryptopay profile test', 'cryptopay profile test prod'],
  'profile use': ['cryptopay profile use prod', 'cryptopay profile use --none'],
  'profile remove': ['cryptopay profile remove prod'],
  sign: ['read -rs CRYPTOPAY_SECRET && export CRYPTOPAY_SECRET   # the secret at a hidden prompt, not in the shell history', 'cryptopay sign --fill --mch-id M100001 oid=A-1 uid=u1 amount=10 --json', 'echo \'{"a":"1"}\' | cryptopay sign --explain --secret-file ./secret'],
  'sign verify': ['cryptopay sign verify --secret-file ./secret --body \'{"a":"1","sign":"..."}\''],
};

/** Marks required options and adds examples, walking the program defineCommands built. */
export function annotateHelp(program: Command): void {
  const walk = (cmd: Command, path: string[]) => {
    const key = path.join(' ');
    const required = REQUIRED[key] ?? {};
    for (const o of cmd.options as Option[]) {
      const name = o.long?.replace(/^--/, '');
      if (name && required[name]) o.description = `${o.description} (${required[name]})`;
    }
    const lines: string[] = [];
    if (Object.values(required).some((v) => v.startsWith('required'))) lines.push('', 'A required option that is missing is asked for on a terminal; elsewhere it is a usage error (exit 2).');
    const examples = EXAMPLES[key];
    if (examples) lines.push('', 'Examples:', ...examples.map((e) => `  $ ${e}`));
    if (lines.length) cmd.addHelpText('after', lines.join('\n'));
    for (const c of cmd.commands) walk(c, [...path, c.name()]);
  };
  walk(program, []);
}
