-- Create order never gives out an address a withdrawal pays to (docs/decisions.md, "Where a
-- payout may go"): the address is looked up here, in any spelling, before it is handed out.
CREATE INDEX `withdrawals_to` ON `withdrawals` (lower(`to_address`));
