ALTER TABLE `withdrawals` ADD `payout_from` text;
--> statement-breakpoint
ALTER TABLE `withdrawals` ADD `payout_nonce` integer;
--> statement-breakpoint
ALTER TABLE `withdrawals` ADD `payout_lost_at` integer;
