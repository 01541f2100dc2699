import type {
  CreateOrderRequest,
  RefundRequest,
  WithdrawApplyRequest,
  WithdrawConfirmRequest,
  WithdrawRejectRequest,
  WithdrawVerifyRequest,
} from './schemas.js';
import type { Addresses, Order, OrderStatus, RefundResult, VerificationReport, Withdrawal } from './types.js';

/**
 * The operations of the REST interface, and the one seam of cryptopay: the ledger implements
 * it, the HTTP server serves it, the remote client forwards it. Inputs are the interface's
 * request bodies without the signing fields; every implementation validates them with the same
 * schemas and refuses with the same AppError kinds and messages.
 */
export interface PaymentService {
  createOrder(input: CreateOrderRequest): Promise<Order>;
  getAddresses(id: string): Promise<Addresses>;
  getOrderStatus(id: string): Promise<OrderStatus>;
  refund(input: RefundRequest): Promise<RefundResult>;
  applyWithdrawal(input: WithdrawApplyRequest): Promise<Withdrawal>;
  confirmWithdrawal(input: WithdrawConfirmRequest): Promise<Withdrawal>;
  rejectWithdrawal(input: WithdrawRejectRequest): Promise<Withdrawal>;
}

/**
 * What an operator needs beyond the interface, served as signed extension endpoints (decisions
 * §12) so that remote mode can do it too; the ledger and the remote client both implement it.
 */
export interface OperatorExtensions {
  /** The chain's view of a withdrawal's transaction (its own, or one about to confirm it); changes nothing. */
  verifyWithdrawal(input: WithdrawVerifyRequest): Promise<VerificationReport>;
}

/** Who acts, for the audit log and replay protection. */
export interface Caller {
  /** `--operator NAME` or the OS user on the CLI; `api:<mchId>` for the server. */
  actor: string;
  /** A verified request's nonce, consumed in the same transaction as the operation. */
  nonce?: { merchantId: string; value: string; expiresAt: number };
}
