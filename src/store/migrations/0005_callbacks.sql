CREATE TABLE `callbacks` (
	`id` text PRIMARY KEY NOT NULL,
	`merchant_id` text NOT NULL,
	`event` text NOT NULL,
	`subject_type` text NOT NULL,
	`subject_id` text NOT NULL,
	`url` text NOT NULL,
	`host` text NOT NULL,
	`payload` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL CHECK (`status` IN ('pending', 'delivered', 'failed')),
	`attempts` integer DEFAULT 0 NOT NULL,
	`step` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer NOT NULL,
	`lease_owner` text,
	`lease_until` integer,
	`last_status` integer,
	`last_error` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`delivered_at` integer,
	FOREIGN KEY (`merchant_id`) REFERENCES `merchants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `callbacks_due` ON `callbacks` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `callbacks_subject` ON `callbacks` (`subject_type`,`subject_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `callbacks_expired_once` ON `callbacks` (`subject_id`) WHERE `event` = 'order.expired';--> statement-breakpoint
CREATE TABLE `callback_attempts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`callback_id` text NOT NULL,
	`at` integer NOT NULL,
	`status_code` integer,
	`latency_ms` integer NOT NULL,
	`error` text,
	`owner` text NOT NULL,
	FOREIGN KEY (`callback_id`) REFERENCES `callbacks`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `callback_attempts_callback` ON `callback_attempts` (`callback_id`);--> statement-breakpoint
CREATE TABLE `callback_cursors` (
	`name` text PRIMARY KEY NOT NULL,
	`value` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `orders_expiry` ON `orders` (`status`,`expired_at`);
