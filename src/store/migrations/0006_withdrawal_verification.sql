ALTER TABLE `withdrawals` ADD `verification` text;
--> statement-breakpoint
ALTER TABLE `withdrawals` ADD `verification_note` text;
--> statement-breakpoint
ALTER TABLE `withdrawals` ADD `block_hash` text;
--> statement-breakpoint
UPDATE `withdrawals` SET `verification` = 'unverified', `verification_note` = 'confirmed before on-chain verification existed' WHERE `status` = 'CONFIRMED';
--> statement-breakpoint
CREATE INDEX `withdrawals_confirming` ON `withdrawals` (`chain_id`) WHERE `verification` = 'confirming';
