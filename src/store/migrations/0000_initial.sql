CREATE TABLE `accounts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`merchant_id` text NOT NULL,
	`asset` text NOT NULL,
	`kind` text NOT NULL,
	`uid` text DEFAULT '' NOT NULL,
	`posted` integer DEFAULT 0 NOT NULL,
	`pending_debits` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`merchant_id`) REFERENCES `merchants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `accounts_key` ON `accounts` (`merchant_id`,`asset`,`kind`,`uid`);--> statement-breakpoint
CREATE TABLE `audit_log` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at` integer NOT NULL,
	`actor` text NOT NULL,
	`action` text NOT NULL,
	`merchant_id` text,
	`subject_type` text NOT NULL,
	`subject_id` text NOT NULL,
	`detail` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `audit_subject` ON `audit_log` (`subject_type`,`subject_id`);--> statement-breakpoint
CREATE TABLE `merchants` (
	`id` text PRIMARY KEY NOT NULL,
	`seq` integer NOT NULL,
	`name` text NOT NULL,
	`secret` text NOT NULL,
	`evm_xpub` text,
	`tron_xpub` text,
	`evm_next_index` integer DEFAULT 0 NOT NULL,
	`tron_next_index` integer DEFAULT 0 NOT NULL,
	`order_lifetime_ms` integer NOT NULL,
	`rate_limit` integer NOT NULL,
	`asset` text DEFAULT 'USDT' NOT NULL,
	`created_at` integer NOT NULL,
	`secret_rotated_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `merchants_seq_unique` ON `merchants` (`seq`);--> statement-breakpoint
CREATE TABLE `nonces` (
	`merchant_id` text NOT NULL,
	`nonce` text NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`merchant_id`, `nonce`)
);
--> statement-breakpoint
CREATE INDEX `nonces_expiry` ON `nonces` (`expires_at`);--> statement-breakpoint
CREATE TABLE `order_addresses` (
	`order_id` text NOT NULL,
	`chain_type` text NOT NULL,
	`address` text NOT NULL,
	`derivation_index` integer NOT NULL,
	PRIMARY KEY(`order_id`, `chain_type`),
	FOREIGN KEY (`order_id`) REFERENCES `orders`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `order_addresses_address_unique` ON `order_addresses` (`address`);--> statement-breakpoint
CREATE TABLE `orders` (
	`id` text PRIMARY KEY NOT NULL,
	`merchant_id` text NOT NULL,
	`oid` text NOT NULL,
	`uid` text NOT NULL,
	`asset` text NOT NULL,
	`amount` integer NOT NULL,
	`status` text NOT NULL,
	`memo` text,
	`expired_at` integer NOT NULL,
	`notify_url` text,
	`redirect_url` text,
	`logo` text,
	`paid_amount` integer DEFAULT 0 NOT NULL,
	`refunded_amount` integer DEFAULT 0 NOT NULL,
	`paid_at` integer,
	`late` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`merchant_id`) REFERENCES `merchants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `orders_merchant_oid` ON `orders` (`merchant_id`,`oid`);--> statement-breakpoint
CREATE INDEX `orders_merchant_status` ON `orders` (`merchant_id`,`status`,`expired_at`);--> statement-breakpoint
CREATE INDEX `orders_uid` ON `orders` (`merchant_id`,`uid`);--> statement-breakpoint
CREATE TABLE `payments` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`order_id` text NOT NULL,
	`tx_hash` text NOT NULL,
	`amount` integer NOT NULL,
	`chain_type` text,
	`chain_id` text,
	`token` text,
	`late` integer DEFAULT false NOT NULL,
	`source` text NOT NULL,
	`transfer_id` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`order_id`) REFERENCES `orders`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `payments_tx_hash_unique` ON `payments` (`tx_hash`);--> statement-breakpoint
CREATE INDEX `payments_order` ON `payments` (`order_id`);--> statement-breakpoint
CREATE TABLE `refunds` (
	`id` text PRIMARY KEY NOT NULL,
	`order_id` text NOT NULL,
	`amount` integer NOT NULL,
	`remark` text DEFAULT '' NOT NULL,
	`transfer_id` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`order_id`) REFERENCES `orders`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `refunds_order` ON `refunds` (`order_id`);--> statement-breakpoint
CREATE TABLE `transfers` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`merchant_id` text NOT NULL,
	`asset` text NOT NULL,
	`debit_account_id` integer NOT NULL,
	`credit_account_id` integer NOT NULL,
	`amount` integer NOT NULL,
	`state` text NOT NULL,
	`kind` text NOT NULL,
	`ref` text NOT NULL,
	`created_at` integer NOT NULL,
	`resolved_at` integer,
	FOREIGN KEY (`debit_account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`credit_account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `transfers_debit` ON `transfers` (`debit_account_id`);--> statement-breakpoint
CREATE INDEX `transfers_credit` ON `transfers` (`credit_account_id`);--> statement-breakpoint
CREATE INDEX `transfers_ref` ON `transfers` (`ref`);--> statement-breakpoint
CREATE TABLE `withdrawals` (
	`id` text PRIMARY KEY NOT NULL,
	`merchant_id` text NOT NULL,
	`uid` text NOT NULL,
	`asset` text NOT NULL,
	`amount` integer NOT NULL,
	`to_address` text NOT NULL,
	`chain_id` text NOT NULL,
	`chain_type` text NOT NULL,
	`token` text NOT NULL,
	`status` text NOT NULL,
	`tx_hash` text,
	`block_number` integer,
	`remark` text,
	`notify_url` text,
	`transfer_id` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`merchant_id`) REFERENCES `merchants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `withdrawals_tx_hash_unique` ON `withdrawals` (`tx_hash`);--> statement-breakpoint
CREATE INDEX `withdrawals_merchant_status` ON `withdrawals` (`merchant_id`,`status`);--> statement-breakpoint
CREATE INDEX `withdrawals_uid` ON `withdrawals` (`merchant_id`,`uid`);