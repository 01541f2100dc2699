-- summary's tallies of today and this week count the period's balance adjustments (an operator's
-- `balance adjust`, a refused payment credited by hand), so that its figures add up to what users
-- hold (a new-user trial: they did not, and nothing said why). Adjustments are few among the
-- transfers; this index holds only them, so a summary never walks every payment's transfer.
CREATE INDEX `transfers_adjustments` ON `transfers` (`merchant_id`,`created_at`) WHERE `kind` = 'adjustment';
