import { pooledRandom, randomBytes } from '../core/random-pool.js';

/**
 * Ids of orders, refunds and withdrawals: the creation time (milliseconds, 9 base-32 digits
 * whose ASCII order is their numeric order) then 128 random bits (base64url). The random part
 * keeps ids unguessable (decisions §1 asks at least 96 bits); the time part makes new ids sort
 * after old ones, so each insert lands at the right edge of the id indexes instead of on a random
 * page: a create order dirtied ~20 index pages fewer per group commit of 25.
 */
export const defaultRandomId = (prefix: string) => `${prefix}_${Date.now().toString(32).padStart(9, '0')}${pooledRandom(16).toString('base64url')}`;

export const newSecret = () => `sk_${randomBytes(24).toString('base64url')}`;
