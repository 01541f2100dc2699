CREATE TABLE `registry_chains` (
	`chain_id` text PRIMARY KEY NOT NULL,
	`entry` text NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `registry_tokens` (
	`chain_id` text NOT NULL,
	`address_key` text NOT NULL,
	`entry` text NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`chain_id`, `address_key`)
);
