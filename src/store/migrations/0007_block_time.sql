ALTER TABLE `chain_payments` ADD `block_time` integer;
--> statement-breakpoint
ALTER TABLE `payments` ADD `block_time` integer;
