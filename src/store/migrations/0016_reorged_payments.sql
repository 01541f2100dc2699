-- A counted payment whose block a reorg deeper than the chain's confirmations replaced, and
-- which was not mined again, stays credited (docs/decisions.md, "A counted payment is final");
-- until an operator has checked it (cryptopay chains --ack-reorg), nothing leaves the ledger on
-- it: no withdrawal of the user it credited, no refund of its order ("A deep reorg holds back").
ALTER TABLE `payments` ADD `reorged_at` integer;
--> statement-breakpoint
CREATE INDEX `payments_reorged` ON `payments` (`order_id`) WHERE `reorged_at` IS NOT NULL;
