-- A payout holds its transaction hash within its own merchant (scope: the merchant's id); a
-- payment, found on chain or recorded by an operator, in the whole ledger (scope ''). Another
-- merchant's payout, verified on chain or not, can then no longer take a hash that a merchant's
-- payment or payout needs (docs/decisions.md, "Who holds a transaction").
CREATE TABLE `tx_keys_new` (
	`key` text NOT NULL CHECK (length(`key`) = 64 AND `key` NOT GLOB '*[^0-9a-f]*'),
	`scope` text DEFAULT '' NOT NULL,
	`use` text NOT NULL CHECK (`use` IN ('payment', 'withdrawal')),
	`shared` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY (`key`, `scope`)
);
--> statement-breakpoint
INSERT INTO `tx_keys_new` (`key`, `scope`, `use`, `shared`, `created_at`)
SELECT `key`, '', `use`, `shared`, `created_at` FROM `tx_keys`;
--> statement-breakpoint
-- Each payout holds its key within its merchant: one row per merchant (a ledger from before 0001
-- may hold one transaction as two merchants' payouts, in two spellings).
INSERT OR IGNORE INTO `tx_keys_new` (`key`, `scope`, `use`, `shared`, `created_at`)
SELECT CASE WHEN lower(substr(`tx_hash`, 1, 2)) = '0x' THEN lower(substr(`tx_hash`, 3)) ELSE lower(`tx_hash`) END, `merchant_id`, 'withdrawal', 0, `updated_at`
FROM `withdrawals` WHERE `tx_hash` IS NOT NULL ORDER BY `updated_at`;
--> statement-breakpoint
DELETE FROM `tx_keys_new` WHERE `scope` = '' AND `use` = 'withdrawal';
--> statement-breakpoint
-- A payment whose key the old table gave to a payout (duplicates from before 0001) holds it again.
INSERT OR IGNORE INTO `tx_keys_new` (`key`, `scope`, `use`, `shared`, `created_at`)
SELECT `tx_key`, '', 'payment', 0, `created_at` FROM `payments` ORDER BY `id`;
--> statement-breakpoint
DROP TABLE `tx_keys`;
--> statement-breakpoint
ALTER TABLE `tx_keys_new` RENAME TO `tx_keys`;
--> statement-breakpoint
-- The same transaction may then name one payout of each merchant: unique within a merchant.
DROP INDEX `withdrawals_tx_hash_unique`;
--> statement-breakpoint
CREATE UNIQUE INDEX `withdrawals_merchant_tx` ON `withdrawals` (`merchant_id`, `tx_hash`);
