-- One index for every lookup of an order's address: whether it was given out (in any spelling:
-- an EVM address is case-insensitive) and the chain watcher's lookup of a recipient as the node
-- writes it (lower-case hex). It replaces the unique index on the address as stored and the one
-- on lower(address) for EVM: every order wrote a random leaf of each to the WAL. A TRON address
-- (base58check, case-sensitive) is looked up by lower(address) and then compared as written.
DROP INDEX `order_addresses_evm_lower`;--> statement-breakpoint
DROP INDEX `order_addresses_address_unique`;--> statement-breakpoint
CREATE UNIQUE INDEX `order_addresses_address` ON `order_addresses` (lower(`address`));
