-- The wallets a merchant pays its users out from (docs/decisions.md, "A payout comes from the
-- merchant's payout wallets"). Once a merchant names any for a chain type, a payout on that
-- chain type verifies only when its tokens moved from one of them.
CREATE TABLE `payout_wallets` (
	`merchant_id` text NOT NULL REFERENCES `merchants`(`id`),
	`chain_type` text NOT NULL,
	`address` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`merchant_id`, `chain_type`, `address`)
);
