import type { ChainInfo, Registry } from '../chains/registry.js';
import type { RpcClient } from '../chains/watch/rpc.js';
import { ASSETS } from '../core/assets.js';
import { AppError, invalid } from '../core/errors.js';
import type { Caller } from '../core/service.js';
import type { Db, Ledger } from './db.js';
import type { Q } from './ledger.js';
import type { Statements } from './statements.js';

/**
 * What every aggregate module of the ledger gets: the connection, the clock, who acts, the
 * registry, ids, the prepared statements, and `write`, the one way to change the ledger (a
 * group-committed transaction that also uses up the caller's nonce). LocalPaymentService builds
 * one per caller; the aggregates never see each other's internals, only this.
 */
export interface StoreCtx {
  readonly ledger: Ledger;
  readonly db: Db;
  readonly caller: Caller;
  now(): number;
  registry(): Promise<Registry>;
  /** The JSON-RPC client of a chain with an rpcUrl (withdrawal confirmations are checked through it). */
  rpc(chain: ChainInfo): Promise<RpcClient>;
  randomId(prefix: string): string;
  stmts(): Statements;
  write<T>(fn: (tx: Q) => T): Promise<T>;
  /** notifyUrl may point inward (development only: serve --allow-private-callbacks). */
  readonly allowPrivateCallbacks: boolean;
  /** What lifts that refusal for whoever made the request, named in it (serve's flag by default). */
  readonly privateSwitch?: string;
  /** The CLI at the ledger file (not serve's API): the public test wallet's merchant may name inward URLs (inward-urls.ts). */
  readonly localOperator?: boolean;
}

/** The precision of an asset the ledger holds; an unknown one is a fault of the ledger's data. */
export function decimalsOf(asset: string): number {
  if (!Object.hasOwn(ASSETS, asset)) throw new AppError('internal', `unknown asset ${asset}`);
  return ASSETS[asset]!.decimals;
}

/** An asset a request names: one the service knows, or the caller's mistake (400), never a fault. */
export function requestedAsset(asset: string): string {
  if (!Object.hasOwn(ASSETS, asset)) throw invalid(`asset ${asset} is not one this service knows (${Object.keys(ASSETS).join(', ')})`);
  return asset;
}
