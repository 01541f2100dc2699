CREATE TABLE `chain_cursors` (
	`chain_id` text PRIMARY KEY NOT NULL,
	`next_block` integer NOT NULL,
	`head` integer,
	`head_at` integer,
	`lease_holder` text,
	`lease_expires_at` integer,
	`last_error` text,
	`last_error_at` integer,
	`deep_reorg` text,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `chain_blocks` (
	`chain_id` text NOT NULL,
	`number` integer NOT NULL,
	`hash` text NOT NULL,
	PRIMARY KEY(`chain_id`, `number`)
);
--> statement-breakpoint
CREATE TABLE `chain_payments` (
	`chain_id` text NOT NULL,
	`tx_hash` text NOT NULL,
	`log_index` integer NOT NULL,
	`block_number` integer NOT NULL,
	`block_hash` text NOT NULL,
	`order_id` text NOT NULL,
	`token` text NOT NULL,
	`to_address` text NOT NULL,
	`raw_amount` text NOT NULL,
	`amount` integer NOT NULL,
	`status` text NOT NULL,
	`seen_at` integer NOT NULL,
	`counted_at` integer,
	PRIMARY KEY(`chain_id`, `tx_hash`, `log_index`),
	FOREIGN KEY (`order_id`) REFERENCES `orders`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `chain_payments_order` ON `chain_payments` (`order_id`);--> statement-breakpoint
CREATE INDEX `chain_payments_due` ON `chain_payments` (`chain_id`,`status`,`block_number`);--> statement-breakpoint
CREATE INDEX `order_addresses_evm_lower` ON `order_addresses` (lower(`address`)) WHERE `chain_type` = 'EVM';
