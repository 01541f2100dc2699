-- summary's tallies of today and this week read the payments and refunds of the period, not every
-- order of the merchant (a scale review: 3.1 s per call at 240,000 orders, holding serve's event
-- loop; the merchant's orders were walked through orders_uid). Held and refused payments, which an
-- operator decides, are found by their status.
CREATE INDEX `payments_created` ON `payments` (`created_at`);
--> statement-breakpoint
CREATE INDEX `refunds_created` ON `refunds` (`created_at`);
--> statement-breakpoint
CREATE INDEX `chain_payments_status` ON `chain_payments` (`status`);
