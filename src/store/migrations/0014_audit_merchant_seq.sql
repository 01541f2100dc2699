-- Each merchant's audit entries are numbered on their own, 1, 2, 3 ... in commit order: what a
-- merchant reads of the log (its entries' numbers, the mark of log/follow) counted the whole
-- ledger's entries, every merchant's, and gave away the others' volume (an outside review;
-- docs/decisions.md, "A merchant's log is numbered on its own"). The trigger numbers every entry
-- written, by this release or by a process of an older one still running on the file.
ALTER TABLE `audit_log` ADD `merchant_seq` integer;
--> statement-breakpoint
UPDATE `audit_log` SET `merchant_seq` = `numbered`.`n`
FROM (SELECT `id`, row_number() OVER (PARTITION BY `merchant_id` ORDER BY `id`) AS `n` FROM `audit_log` WHERE `merchant_id` IS NOT NULL) AS `numbered`
WHERE `audit_log`.`id` = `numbered`.`id`;
--> statement-breakpoint
CREATE UNIQUE INDEX `audit_merchant_seq` ON `audit_log` (`merchant_id`, `merchant_seq`);
--> statement-breakpoint
CREATE TRIGGER `audit_merchant_seq` AFTER INSERT ON `audit_log`
WHEN NEW.`merchant_id` IS NOT NULL AND NEW.`merchant_seq` IS NULL
BEGIN
  UPDATE `audit_log` SET `merchant_seq` = (SELECT coalesce(max(`merchant_seq`), 0) + 1 FROM `audit_log` WHERE `merchant_id` = NEW.`merchant_id`)
  WHERE `id` = NEW.`id`;
END;
