-- Whose tokens a payment moved (the Transfer log's `from`), as the chain watcher saw it: where a
-- refund goes back to, and what a customer names when asking about a payment ("I paid from
-- 0x…": cryptopay order find). Null on rows seen before this migration.
ALTER TABLE `chain_payments` ADD `from_address` text;
--> statement-breakpoint
CREATE INDEX `chain_payments_from` ON `chain_payments` (lower(`from_address`)) WHERE `from_address` IS NOT NULL;
