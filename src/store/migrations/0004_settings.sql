-- Service-wide settings that outlive a process, such as the public address of the payment page
-- that the last `cryptopay serve` announced (so a local `order create` prints the same payUrl).
CREATE TABLE `settings` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL,
	`updated_at` integer NOT NULL
);
