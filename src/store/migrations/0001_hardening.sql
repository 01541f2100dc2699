-- Issue #10: one transaction, one key; balances that cannot leave 64-bit integers.
-- Runs with foreign keys off (src/store/db.ts, SQLite's procedure for rebuilding a table) and
-- is followed by a foreign_key_check.

-- Every transaction hash the ledger has recorded, under its canonical key: the 32 bytes as 64
-- lower-case hex digits, no 0x (a TRON hash and an EVM hash of the same bytes are one key). A key
-- is a payment's or a withdrawal's, never both. `shared` = 1 only for a key first recorded by the
-- chain watcher: further Transfer logs of that same transaction may pay other orders.
CREATE TABLE `tx_keys` (
	`key` text PRIMARY KEY NOT NULL CHECK (length(`key`) = 64 AND `key` NOT GLOB '*[^0-9a-f]*'),
	`use` text NOT NULL CHECK (`use` IN ('payment', 'withdrawal')),
	`shared` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `payments_new` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`order_id` text NOT NULL,
	`tx_hash` text NOT NULL,
	`tx_key` text NOT NULL,
	`log_index` integer,
	`amount` integer NOT NULL CHECK (typeof(`amount`) = 'integer' AND `amount` > 0),
	`raw_amount` text,
	`chain_type` text,
	`chain_id` text,
	`token` text,
	`block_number` integer,
	`block_hash` text,
	`late` integer DEFAULT false NOT NULL,
	`source` text NOT NULL,
	`transfer_id` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`order_id`) REFERENCES `orders`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
INSERT INTO `payments_new` (`id`, `order_id`, `tx_hash`, `tx_key`, `amount`, `chain_type`, `chain_id`, `token`, `late`, `source`, `transfer_id`, `created_at`)
SELECT `id`, `order_id`, `tx_hash`,
	CASE WHEN lower(substr(`tx_hash`, 1, 2)) = '0x' THEN lower(substr(`tx_hash`, 3)) ELSE lower(`tx_hash`) END,
	`amount`, `chain_type`, `chain_id`, `token`, `late`, `source`, `transfer_id`, `created_at`
FROM `payments` ORDER BY `id`;
--> statement-breakpoint
DROP TABLE `payments`;
--> statement-breakpoint
ALTER TABLE `payments_new` RENAME TO `payments`;
--> statement-breakpoint
CREATE INDEX `payments_order` ON `payments` (`order_id`);
--> statement-breakpoint
CREATE INDEX `payments_tx_key` ON `payments` (`tx_key`);
--> statement-breakpoint
CREATE UNIQUE INDEX `payments_chain_log` ON `payments` (`chain_id`, `tx_key`, `log_index`) WHERE `log_index` IS NOT NULL;
--> statement-breakpoint
-- A ledger may already hold one transaction twice (the defect this fixes): the first use keeps
-- the key, the others stay as recorded and `ledger check` names them.
INSERT OR IGNORE INTO `tx_keys` (`key`, `use`, `shared`, `created_at`)
SELECT `tx_key`, 'payment', 0, `created_at` FROM `payments` ORDER BY `id`;
--> statement-breakpoint
INSERT OR IGNORE INTO `tx_keys` (`key`, `use`, `shared`, `created_at`)
SELECT CASE WHEN lower(substr(`tx_hash`, 1, 2)) = '0x' THEN lower(substr(`tx_hash`, 3)) ELSE lower(`tx_hash`) END, 'withdrawal', 0, `updated_at`
FROM `withdrawals` WHERE `tx_hash` IS NOT NULL ORDER BY `updated_at`;
--> statement-breakpoint
CREATE TABLE `accounts_new` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`merchant_id` text NOT NULL,
	`asset` text NOT NULL,
	`kind` text NOT NULL,
	`uid` text DEFAULT '' NOT NULL,
	`posted` integer DEFAULT 0 NOT NULL,
	`pending_debits` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`merchant_id`) REFERENCES `merchants`(`id`) ON UPDATE no action ON DELETE no action,
	-- SQLite turns an integer sum past 64 bits into a float: refuse it at the last line too.
	CONSTRAINT `accounts_integers` CHECK (typeof(`posted`) = 'integer' AND typeof(`pending_debits`) = 'integer' AND `pending_debits` >= 0)
);
--> statement-breakpoint
INSERT INTO `accounts_new` (`id`, `merchant_id`, `asset`, `kind`, `uid`, `posted`, `pending_debits`)
SELECT `id`, `merchant_id`, `asset`, `kind`, `uid`, `posted`, `pending_debits` FROM `accounts` ORDER BY `id`;
--> statement-breakpoint
DROP TABLE `accounts`;
--> statement-breakpoint
ALTER TABLE `accounts_new` RENAME TO `accounts`;
--> statement-breakpoint
CREATE UNIQUE INDEX `accounts_key` ON `accounts` (`merchant_id`, `asset`, `kind`, `uid`);
