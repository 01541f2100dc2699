-- Each payment and refund names its order's merchant, so that a merchant's summary reads its own
-- payments and refunds of the period (merchant_id, created_at) and no other merchant's (session
-- 24's attacker review: found by time over every merchant, a merchant with no orders held serve's
-- event loop 320 ms a summary on a ledger where another had 200,000 payments this week).
ALTER TABLE `payments` ADD `merchant_id` text;
--> statement-breakpoint
UPDATE `payments` SET `merchant_id` = (SELECT `merchant_id` FROM `orders` WHERE `orders`.`id` = `payments`.`order_id`);
--> statement-breakpoint
ALTER TABLE `refunds` ADD `merchant_id` text;
--> statement-breakpoint
UPDATE `refunds` SET `merchant_id` = (SELECT `merchant_id` FROM `orders` WHERE `orders`.`id` = `refunds`.`order_id`);
--> statement-breakpoint
CREATE INDEX `payments_merchant_created` ON `payments` (`merchant_id`,`created_at`);
--> statement-breakpoint
CREATE INDEX `refunds_merchant_created` ON `refunds` (`merchant_id`,`created_at`);
