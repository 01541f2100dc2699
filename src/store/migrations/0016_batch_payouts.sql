-- A batch payout (one transaction, a transfer to each payee) confirms every withdrawal of the
-- merchant it pays (docs/decisions.md, "A batch payout"): a transaction may name several
-- withdrawals of one merchant, but not two that it would pay with one transfer (the same amount
-- of the same token to the same address). Which payouts may share a transaction at all (only
-- those checked on chain) is the transaction keys' rule (src/store/payout-keys.ts).
DROP INDEX `withdrawals_merchant_tx`;
--> statement-breakpoint
CREATE UNIQUE INDEX `withdrawals_merchant_tx` ON `withdrawals` (`merchant_id`, `tx_hash`, `chain_id`, `token`, `to_address`, `amount`);
