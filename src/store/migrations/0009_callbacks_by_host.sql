CREATE INDEX `callbacks_pending_host` ON `callbacks` (`host`,`next_attempt_at`) WHERE `status` = 'pending';
