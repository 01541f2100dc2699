-- How far in time the chain watcher has read a chain (ms): every block whose timestamp is at or
-- before it has been scanned, its payments stored. The expiry sweep waits for it before it tells
-- a merchant an order expired (docs/decisions.md, "order.expired waits for the chain").
ALTER TABLE `chain_cursors` ADD `seen_through` integer;
--> statement-breakpoint
-- Orders whose order.expired waits for a payment made before the expiry to confirm.
CREATE TABLE `expiry_holds` (
	`order_id` text PRIMARY KEY NOT NULL,
	`expired_at` integer NOT NULL,
	FOREIGN KEY (`order_id`) REFERENCES `orders`(`id`) ON UPDATE no action ON DELETE no action
);
