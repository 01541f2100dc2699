import { HDNodeWallet, Mnemonic, SigningKey, hexlify, randomBytes } from 'ethers';
import { AppError } from '../core/errors.js';
import type { ChainType } from '../core/types.js';
import { decodeBase58Check } from './address.js';

export { warmUpDerivation } from './ckd.js';

/** BIP-44 account levels; payment addresses are their children 0/i. */
export const ACCOUNT_PATHS: Readonly<Record<ChainType, string>> = { EVM: "m/44'/60'/0'", TRON: "m/44'/195'/0'" };

const XPUB_VERSION = '0488b21e';
const PRIVATE_VERSIONS: Record<string, string> = { '0488ade4': 'xprv', '04358394': 'tprv' };

function refuse(field: string, problem: string): never {
  throw new AppError('invalid', `${field} ${problem}`);
}

/** Returns the depth; refuses anything but a well-formed mainnet xpub. Never echoes the key. */
function inspectXpub(xpub: unknown, field: string): number {
  if (typeof xpub !== 'string') refuse(field, 'must be a string holding an extended public key (xpub...)');
  const decoded = decodeBase58Check(xpub);
  if (!decoded.ok) refuse(field, `is not a valid extended public key: ${decoded.reason}`);
  const b = decoded.payload;
  if (b.length !== 78) refuse(field, `is not a valid extended public key: decodes to ${b.length} bytes, BIP-32 keys have 78`);
  const version = hexlify(b.subarray(0, 4)).slice(2);
  const priv = PRIVATE_VERSIONS[version];
  if (priv) {
    refuse(field, `is an extended private key (${priv}): a private key must never be given to this service; give the account-level extended public key (xpub) instead`);
  }
  if (version !== XPUB_VERSION) {
    refuse(field, `is not a mainnet extended public key: version bytes 0x${version}, expected 0x${XPUB_VERSION} (xpub)`);
  }
  const depth = b[4]!;
  // BIP-32: a master key has no parent, so a depth-0 key claiming one is corrupt.
  if (depth === 0 && b.subarray(5, 13).some((x) => x !== 0)) {
    refuse(field, 'is not a valid extended public key: depth 0 with a parent fingerprint or child number');
  }
  const key = b.subarray(45, 78);
  if (key[0] !== 2 && key[0] !== 3) refuse(field, 'is not a valid extended public key: the key is not a compressed public key');
  try {
    SigningKey.computePublicKey(key, true);
  } catch {
    refuse(field, 'is not a valid extended public key: the key is not a point on secp256k1');
  }
  return depth;
}

/** Any depth; the BIP-32 vectors use it, the service uses parseAccountXpub. */
export function parseExtendedPublicKey(xpub: unknown, field = 'xpub'): string {
  inspectXpub(xpub, field);
  return xpub as string;
}

export function parseAccountXpub(xpub: unknown, field: string): string {
  const depth = inspectXpub(xpub, field);
  if (depth !== 3) {
    refuse(
      field,
      `is an extended public key at depth ${depth}; the account-level key is expected (depth 3: ${ACCOUNT_PATHS.EVM} for EVM, ${ACCOUNT_PATHS.TRON} for TRON), from which addresses 0/i are derived`,
    );
  }
  return xpub as string;
}

export { createDeriver, deriveAddress, type Deriver } from './deriver.js';

export interface WalletKeys {
  mnemonic: string;
  evmXpub: string;
  tronXpub: string;
}

export function walletFromMnemonic(phrase: string): WalletKeys {
  if (typeof phrase !== 'string' || !Mnemonic.isValidMnemonic(phrase)) {
    throw new AppError('invalid', 'mnemonic is not a valid BIP-39 English phrase (unknown word, wrong word count or checksum)');
  }
  const mnemonic = Mnemonic.fromPhrase(phrase);
  const root = HDNodeWallet.fromSeed(mnemonic.computeSeed());
  return {
    mnemonic: mnemonic.phrase,
    evmXpub: root.derivePath(ACCOUNT_PATHS.EVM).neuter().extendedKey,
    tronXpub: root.derivePath(ACCOUNT_PATHS.TRON).neuter().extendedKey,
  };
}

/** 24 words from 32 bytes of CSPRNG output; only the xpubs are meant to be stored. */
export function generateWallet(): WalletKeys {
  return walletFromMnemonic(Mnemonic.fromEntropy(randomBytes(32)).phrase);
}
