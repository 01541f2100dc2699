export type ChainType = 'EVM' | 'TRON';
export const CHAIN_TYPES: readonly ChainType[] = ['EVM', 'TRON'];

export type OrderStatus = 'PENDING_PAY' | 'PAID' | 'EXPIRED' | 'REFUNDED';
export const ORDER_STATUSES: readonly OrderStatus[] = ['PENDING_PAY', 'PAID', 'EXPIRED', 'REFUNDED'];

export type WithdrawalStatus = 'PENDING' | 'CONFIRMED' | 'REJECTED';
export const WITHDRAWAL_STATUSES: readonly WithdrawalStatus[] = ['PENDING', 'CONFIRMED', 'REJECTED'];

export type Addresses = Partial<Record<ChainType, string>>;

/** The payment order of interface §2.2, as create order answers it. */
export interface Order {
  id: string;
  oid: string;
  uid: string;
  amount: string;
  status: OrderStatus;
  expiredAt: number;
  addresses: Addresses;
  /** The payment page (decisions §11), on create order's answer only. */
  payUrl?: string;
}

/** Everything the ledger knows of an order (decisions §3: "order fields beyond ..."). */
export interface OrderDetail extends Order {
  mchId: string;
  asset: string;
  memo: string | null;
  notifyUrl: string | null;
  redirectUrl: string | null;
  logo: string | null;
  paidAmount: string;
  refundedAmount: string;
  paidAt: number | null;
  late: boolean;
  createdAt: number;
  payments: Payment[];
}

export interface Payment {
  txHash: string;
  amount: string;
  chainType: ChainType | null;
  chainId: string | null;
  token: string | null;
  late: boolean;
  source: 'manual' | 'chain';
  createdAt: number;
}

/** Interface §2.5. */
export interface RefundResult {
  id: string;
  oid: string;
  amount: string;
  status: 'REFUNDED';
  remark: string;
  refundTime: number;
}

/** Decisions §6: the record all three withdrawal operations answer with. */
export interface Withdrawal {
  id: string;
  uid: string;
  amount: string;
  to: string;
  chainId: string;
  chainType: ChainType;
  token: string;
  status: WithdrawalStatus;
  txHash: string | null;
  blockNumber: number | null;
  remark: string | null;
  createdAt: number;
  updatedAt: number;
}

/**
 * What the chain says about a withdrawal's transaction next to what the withdrawal expects
 * (issue #12): `withdraw verify`, the question of `withdraw confirm`, `POST /api/v1/withdraw/verify`.
 */
export interface VerificationReport {
  id: string;
  status: WithdrawalStatus;
  /** How its confirmation was trusted: null (not confirmed), confirming, verified, unverified. */
  verification: 'confirming' | 'verified' | 'unverified' | null;
  txHash: string;
  blockNumber: number;
  /** The transaction pays exactly this withdrawal in that block. */
  matches: boolean;
  /** It matches and has the chain's confirmations. */
  deep: boolean;
  verdict: 'match' | 'mismatch' | 'unknown' | 'unmined';
  /** One sentence for the operator: what matches, or everything that differs. */
  message: string;
  expected: { token: string; tokenSymbol: string; amount: string; rawAmount: string; to: string; blockNumber: number; confirmations: number };
  chain: {
    known: boolean;
    mined: boolean;
    succeeded: boolean | null;
    blockNumber: number | null;
    blockHash: string | null;
    head: number;
    confirmations: number;
    transfers: { token: string; to: string; rawAmount: string; amount: string | null }[];
  };
}
