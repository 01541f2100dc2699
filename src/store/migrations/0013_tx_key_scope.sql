-- An unverified payout confirmation (a chain without rpcUrl, or an operator's --unverified) holds
-- its transaction hash only within its own merchant (scope: the merchant's id); what the ledger
-- knows for a fact (a payment, a payout verified on chain) holds it in the whole ledger (scope
-- ''). A merchant's word can then no longer take a hash that another merchant's payment or
-- payout needs (docs/decisions.md, "Whose word holds a transaction").
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
UPDATE `tx_keys_new` SET `scope` = u.`merchant_id`
FROM (
	SELECT CASE WHEN lower(substr(`tx_hash`, 1, 2)) = '0x' THEN lower(substr(`tx_hash`, 3)) ELSE lower(`tx_hash`) END AS `key`, `merchant_id`
	FROM `withdrawals` WHERE `verification` = 'unverified' AND `tx_hash` IS NOT NULL
) AS u
WHERE `tx_keys_new`.`key` = u.`key` AND `tx_keys_new`.`use` = 'withdrawal';
--> statement-breakpoint
DROP TABLE `tx_keys`;
--> statement-breakpoint
ALTER TABLE `tx_keys_new` RENAME TO `tx_keys`;
--> statement-breakpoint
-- The same transaction may then name one payout of each merchant: unique within a merchant.
DROP INDEX `withdrawals_tx_hash_unique`;
--> statement-breakpoint
CREATE UNIQUE INDEX `withdrawals_merchant_tx` ON `withdrawals` (`merchant_id`, `tx_hash`);
