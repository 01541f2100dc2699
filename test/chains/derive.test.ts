import { describe, expect, it } from 'vitest';
import { HDNodeWallet } from 'ethers';
import { TronWeb } from 'tronweb';
import { decodeBase58Check } from '../../src/chains/address.js';
import { base58check } from '../../src/chains/encode.js';
import {
  createDeriver,
  deriveAddress,
  generateWallet,
  parseAccountXpub,
  parseExtendedPublicKey,
  walletFromMnemonic,
} from '../../src/chains/derive.js';
import { expectInvalid } from '../helpers/errors.js';

const HARDHAT = 'test test test test test test test test test test test junk';

describe('EVM derivation', () => {
  it('gives the well-known Hardhat/Anvil accounts at m/44\'/60\'/0\'/0/0 and /1', () => {
    const d = createDeriver(walletFromMnemonic(HARDHAT).evmXpub);
    expect(d.evm(0)).toBe('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
    expect(d.evm(1)).toBe('0x70997970C51812dc3A010C7d01b50e0d17dc79C8');
  });

  it('matches private-key derivation of the full path for 20 indexes', () => {
    const { evmXpub } = walletFromMnemonic(HARDHAT);
    for (let i = 0; i < 20; i++) {
      const viaPrivate = HDNodeWallet.fromPhrase(HARDHAT, undefined, `m/44'/60'/0'/0/${i}`);
      expect(deriveAddress('EVM', evmXpub, i)).toBe(viaPrivate.address);
      expect(createDeriver(evmXpub).publicKey(i)).toBe(viaPrivate.publicKey);
    }
  });
});

describe('TRON derivation', () => {
  // Published vector: tetherto/wdk-wallet-tron, tests/wallet-account-tron.test.js (commit 125deec0),
  // seed phrase "cook voyage ..." at m/44'/195'/0'/0/0 -> TXngH8bVadn9ZWtKBgjKQcqN1GsZ7A1jcb,
  // compressed public key 03ebdf0c...603b0.
  const WDK = 'cook voyage document eight skate token alien guide drink uncle term abuse';

  it('gives the published address and public key of m/44\'/195\'/0\'/0/0', () => {
    const d = createDeriver(walletFromMnemonic(WDK).tronXpub);
    expect(d.tron(0)).toBe('TXngH8bVadn9ZWtKBgjKQcqN1GsZ7A1jcb');
    expect(d.publicKey(0)).toBe('0x03ebdf0c06e1523a5931e7593e3ac231f5a123b898eb6c02af61aa83b32f8603b0');
  });

  // tronweb derives from the private key down the full path and encodes with its own code, so it
  // checks our public (xpub) derivation and our base58check independently.
  it.each([WDK, HARDHAT])('agrees with TronWeb.fromMnemonic for 20 indexes of "%s"', (phrase) => {
    const { tronXpub } = walletFromMnemonic(phrase);
    for (let i = 0; i < 20; i++) {
      const oracle = TronWeb.fromMnemonic(phrase, `m/44'/195'/0'/0/${i}`).address;
      expect(deriveAddress('TRON', tronXpub, i)).toBe(oracle);
    }
  });

  it('uses the TRON account, not the EVM one', () => {
    const w = walletFromMnemonic(HARDHAT);
    expect(createDeriver(w.tronXpub).tron(0)).not.toBe(createDeriver(w.evmXpub).tron(0));
  });
});

describe('indexes and cache', () => {
  const { evmXpub } = walletFromMnemonic(HARDHAT);

  it.each([-1, 1.5, 2 ** 31, Number.NaN, Number.POSITIVE_INFINITY])('refuses index %s', (i) => {
    expectInvalid(() => createDeriver(evmXpub).evm(i), /address index must be an integer from 0 to 2147483647/);
  });

  it('accepts the last non-hardened index', () => {
    expect(createDeriver(evmXpub).evm(2 ** 31 - 1)).toMatch(/^0x[0-9a-fA-F]{40}$/);
  });

  it('reuses one deriver per xpub', () => {
    expect(createDeriver(evmXpub)).toBe(createDeriver(evmXpub));
  });

  it('refuses a bad xpub when creating a deriver', () => {
    expectInvalid(() => createDeriver('xpub-nonsense'), /not a valid extended public key/);
  });
});

// BIP-32 test vectors 1 and 2, https://github.com/bitcoin/bips/blob/master/bip-0032.mediawiki#test-vectors
const V1 = {
  m: {
    pub: 'xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8',
    prv: 'xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi',
  },
  m_0H: {
    pub: 'xpub68Gmy5EdvgibQVfPdqkBBCHxA5htiqg55crXYuXoQRKfDBFA1WEjWgP6LHhwBZeNK1VTsfTFUHCdrfp1bgwQ9xv5ski8PX9rL2dZXvgGDnw',
    prv: 'xprv9uHRZZhk6KAJC1avXpDAp4MDc3sQKNxDiPvvkX8Br5ngLNv1TxvUxt4cV1rGL5hj6KCesnDYUhd7oWgT11eZG7XnxHrnYeSvkzY7d2bhkJ7',
  },
  m_0H_1: {
    pub: 'xpub6ASuArnXKPbfEwhqN6e3mwBcDTgzisQN1wXN9BJcM47sSikHjJf3UFHKkNAWbWMiGj7Wf5uMash7SyYq527Hqck2AxYysAA7xmALppuCkwQ',
    prv: 'xprv9wTYmMFdV23N2TdNG573QoEsfRrWKQgWeibmLntzniatZvR9BmLnvSxqu53Kw1UmYPxLgboyZQaXwTCg8MSY3H2EU4pWcQDnRnrVA1xe8fs',
  },
  m_0H_1_2H: {
    pub: 'xpub6D4BDPcP2GT577Vvch3R8wDkScZWzQzMMUm3PWbmWvVJrZwQY4VUNgqFJPMM3No2dFDFGTsxxpG5uJh7n7epu4trkrX7x7DogT5Uv6fcLW5',
    prv: 'xprv9z4pot5VBttmtdRTWfWQmoH1taj2axGVzFqSb8C9xaxKymcFzXBDptWmT7FwuEzG3ryjH4ktypQSAewRiNMjANTtpgP4mLTj34bhnZX7UiM',
  },
  m_0H_1_2H_2: {
    pub: 'xpub6FHa3pjLCk84BayeJxFW2SP4XRrFd1JYnxeLeU8EqN3vDfZmbqBqaGJAyiLjTAwm6ZLRQUMv1ZACTj37sR62cfN7fe5JnJ7dh8zL4fiyLHV',
    prv: 'xprvA2JDeKCSNNZky6uBCviVfJSKyQ1mDYahRjijr5idH2WwLsEd4Hsb2Tyh8RfQMuPh7f7RtyzTtdrbdqqsunu5Mm3wDvUAKRHSC34sJ7in334',
  },
  m_0H_1_2H_2_1000000000: {
    pub: 'xpub6H1LXWLaKsWFhvm6RVpEL9P4KfRZSW7abD2ttkWP3SSQvnyA8FSVqNTEcYFgJS2UaFcxupHiYkro49S8yGasTvXEYBVPamhGW6cFJodrTHy',
    prv: 'xprvA41z7zogVVwxVSgdKUHDy1SKmdb533PjDz7J6N6mV6uS3ze1ai8FHa8kmHScGpWmj4WggLyQjgPie1rFSruoUihUZREPSL39UNdE3BBDu76',
  },
};
const V2 = {
  m: {
    pub: 'xpub661MyMwAqRbcFW31YEwpkMuc5THy2PSt5bDMsktWQcFF8syAmRUapSCGu8ED9W6oDMSgv6Zz8idoc4a6mr8BDzTJY47LJhkJ8UB7WEGuduB',
    prv: 'xprv9s21ZrQH143K31xYSDQpPDxsXRTUcvj2iNHm5NUtrGiGG5e2DtALGdso3pGz6ssrdK4PFmM8NSpSBHNqPqm55Qn3LqFtT2emdEXVYsCzC2U',
  },
  m_0: {
    pub: 'xpub69H7F5d8KSRgmmdJg2KhpAK8SR3DjMwAdkxj3ZuxV27CprR9LgpeyGmXUbC6wb7ERfvrnKZjXoUmmDznezpbZb7ap6r1D3tgFxHmwMkQTPH',
    prv: 'xprv9vHkqa6EV4sPZHYqZznhT2NPtPCjKuDKGY38FBWLvgaDx45zo9WQRUT3dKYnjwih2yJD9mkrocEZXo1ex8G81dwSM1fwqWpWkeS3v86pgKt',
  },
  m_0_2147483647H: {
    pub: 'xpub6ASAVgeehLbnwdqV6UKMHVzgqAG8Gr6riv3Fxxpj8ksbH9ebxaEyBLZ85ySDhKiLDBrQSARLq1uNRts8RuJiHjaDMBU4Zn9h8LZNnBC5y4a',
    prv: 'xprv9wSp6B7kry3Vj9m1zSnLvN3xH8RdsPP1Mh7fAaR7aRLcQMKTR2vidYEeEg2mUCTAwCd6vnxVrcjfy2kRgVsFawNzmjuHc2YmYRmagcEPdU9',
  },
  m_0_2147483647H_1: {
    pub: 'xpub6DF8uhdarytz3FWdA8TvFSvvAh8dP3283MY7p2V4SeE2wyWmG5mg5EwVvmdMVCQcoNJxGoWaU9DCWh89LojfZ537wTfunKau47EL2dhHKon',
    prv: 'xprv9zFnWC6h2cLgpmSA46vutJzBcfJ8yaJGg8cX1e5StJh45BBciYTRXSd25UEPVuesF9yog62tGAQtHjXajPPdbRCHuWS6T8XA2ECKADdw4Ef',
  },
  m_0_2147483647H_1_2147483646H: {
    pub: 'xpub6ERApfZwUNrhLCkDtcHTcxd75RbzS1ed54G1LkBUHQVHQKqhMkhgbmJbZRkrgZw4koxb5JaHWkY4ALHY2grBGRjaDMzQLcgJvLJuZZvRcEL',
    prv: 'xprvA1RpRA33e1JQ7ifknakTFpgNXPmW2YvmhqLQYMmrj4xJXXWYpDPS3xz7iAxn8L39njGVyuoseXzU6rcxFLJ8HFsTjSyQbLYnMpCqE2VbFWc',
  },
  m_0_2147483647H_1_2147483646H_2: {
    pub: 'xpub6FnCn6nSzZAw5Tw7cgR9bi15UV96gLZhjDstkXXxvCLsUXBGXPdSnLFbdpq8p9HmGsApME5hQTZ3emM2rnY5agb9rXpVGyy3bdW6EEgAtqt',
    prv: 'xprvA2nrNbFZABcdryreWet9Ea4LvTJcGsqrMzxHx98MMrotbir7yrKCEXw7nadnHM8Dq38EGfSh6dqA9QWTyefMLEcBYJUuekgW4BYPJcr9E7j',
  },
};

/** [parent, non-hardened index, child] for every non-hardened step the two vectors publish. */
const NON_HARDENED_STEPS: [string, number, string][] = [
  [V1.m_0H.pub, 1, V1.m_0H_1.pub],
  [V1.m_0H_1_2H.pub, 2, V1.m_0H_1_2H_2.pub],
  [V1.m_0H_1_2H_2.pub, 1_000_000_000, V1.m_0H_1_2H_2_1000000000.pub],
  [V2.m.pub, 0, V2.m_0.pub],
  [V2.m_0_2147483647H.pub, 1, V2.m_0_2147483647H_1.pub],
  [V2.m_0_2147483647H_1_2147483646H.pub, 2, V2.m_0_2147483647H_1_2147483646H_2.pub],
];
const ALL = [...Object.values(V1), ...Object.values(V2)];
const payloadOf = (xpub: string) => (decodeBase58Check(xpub) as { payload: Uint8Array }).payload;
const depthOf = (xpub: string) => payloadOf(xpub)[4];

describe('BIP-32 test vectors 1 and 2', () => {
  it.each(ALL.map((k) => k.pub))('parses %s at any depth', (xpub) => {
    expect(parseExtendedPublicKey(xpub)).toBe(xpub);
  });

  it.each(NON_HARDENED_STEPS)('derives from %s, child %i, the published child xpub', (parent, index, child) => {
    const node = HDNodeWallet.fromExtendedKey(parseExtendedPublicKey(parent));
    expect(node.deriveChild(index).extendedKey).toBe(child);
  });

  // The deriver goes parent/0/i by public derivation; the vector's xprv gets there privately.
  it.each(ALL)('deriver matches private derivation 0/i below $pub', ({ pub, prv }) => {
    const d = createDeriver(pub);
    const viaPrivate = HDNodeWallet.fromExtendedKey(prv).deriveChild(0);
    for (const i of [0, 1, 7, 2 ** 31 - 1]) {
      const k = viaPrivate.deriveChild(i);
      expect(d.publicKey(i)).toBe(k.publicKey);
      expect(d.evm(i)).toBe(k.address);
    }
  });

  it.each(ALL.map((k) => k.pub).filter((x) => depthOf(x) !== 3))('parseAccountXpub refuses %s (depth is not 3)', (xpub) => {
    expectInvalid(() => parseAccountXpub(xpub, 'evmXpub'), /^evmXpub is an extended public key at depth [0-9]+; the account-level key is expected \(depth 3: m\/44'\/60'\/0' for EVM, m\/44'\/195'\/0' for TRON\)/);
  });

  it.each(ALL.map((k) => k.pub).filter((x) => depthOf(x) === 3))('parseAccountXpub accepts %s (depth 3)', (xpub) => {
    expect(parseAccountXpub(xpub, 'evmXpub')).toBe(xpub);
  });

  it.each(ALL.map((k) => k.prv))('refuses the private key %s, saying it must never be given', (xprv) => {
    const e = expectInvalid(() => parseAccountXpub(xprv, 'tronXpub'), /^tronXpub is an extended private key \(xprv\): a private key must never be given/);
    expectInvalid(() => parseExtendedPublicKey(xprv), /private key must never be given/);
    expect(e.message).not.toContain(xprv.slice(4, 20));
  });

  // ethers 6.17 skips the checksum of an 82-byte key, so this refusal is ours to make.
  it.each(ALL.map((k) => k.pub))('refuses %s with one character changed', (xpub) => {
    const at = 60;
    const changed = xpub.slice(0, at) + (xpub[at] === 'a' ? 'b' : 'a') + xpub.slice(at + 1);
    expectInvalid(() => parseExtendedPublicKey(changed, 'evmXpub'), /^evmXpub is not a valid extended public key: base58check checksum does not match/);
  });
});

describe('malformed extended keys', () => {
  const payload = () => payloadOf(V1.m_0H_1_2H.pub);

  it.each([
    [undefined, /must be a string/],
    [42, /must be a string/],
    ['', /not a base58 string/],
    ['xpub0000', /not a base58 string/],
    [' ' + V1.m_0H_1_2H.pub, /not a base58 string/],
    [V1.m_0H_1_2H.pub + 'x'.repeat(500), /not a base58 string/],
  ])('refuses %j', (v, re) => {
    expectInvalid(() => parseAccountXpub(v, 'xpub'), re);
  });

  it('refuses a well-checksummed payload of the wrong length', () => {
    expectInvalid(() => parseAccountXpub(base58check.encode(payload().subarray(0, 77)), 'xpub'), /decodes to 77 bytes/);
  });

  it('refuses other version bytes (tpub)', () => {
    const b = payload();
    b.set([0x04, 0x35, 0x87, 0xcf], 0);
    expectInvalid(() => parseAccountXpub(base58check.encode(b), 'xpub'), /version bytes 0x043587cf, expected 0x0488b21e \(xpub\)/);
  });

  it('refuses a key that is not a curve point', () => {
    const b = payload();
    b.set(new Uint8Array(32).fill(0xff), 46); // x >= p
    expectInvalid(() => parseAccountXpub(base58check.encode(b), 'xpub'), /not a point on secp256k1/);
  });

  it('refuses a key that is not compressed', () => {
    const b = payload();
    b[45] = 0x04;
    expectInvalid(() => parseAccountXpub(base58check.encode(b), 'xpub'), /not a compressed public key/);
  });

  it('refuses a master key that claims a parent', () => {
    const b = payloadOf(V2.m.pub);
    b[5] = 1;
    expectInvalid(() => parseExtendedPublicKey(base58check.encode(b)), /depth 0 with a parent fingerprint/);
  });
});

describe('wallets', () => {
  it('generates a 24-word mnemonic whose xpubs it reproduces and which pass parseAccountXpub', () => {
    const w = generateWallet();
    expect(w.mnemonic.split(' ')).toHaveLength(24);
    expect(walletFromMnemonic(w.mnemonic)).toEqual(w);
    expect(parseAccountXpub(w.evmXpub, 'evmXpub')).toBe(w.evmXpub);
    expect(parseAccountXpub(w.tronXpub, 'tronXpub')).toBe(w.tronXpub);
    expect(w.evmXpub).not.toBe(w.tronXpub);
    expect(generateWallet().mnemonic).not.toBe(w.mnemonic);
  });

  it('gives account-level keys that match the full private path', () => {
    const w = walletFromMnemonic(HARDHAT);
    expect(w.evmXpub).toBe(HDNodeWallet.fromPhrase(HARDHAT, undefined, "m/44'/60'/0'").neuter().extendedKey);
    expect(w.tronXpub).toBe(HDNodeWallet.fromPhrase(HARDHAT, undefined, "m/44'/195'/0'").neuter().extendedKey);
  });

  it.each([
    'test test test test test test test test test test test test', // bad checksum
    'test test test test test test test test test test junk', // 11 words
    'tset test test test test test test test test test test junk',
    '',
  ])('refuses the mnemonic %j', (phrase) => {
    expectInvalid(() => walletFromMnemonic(phrase), /mnemonic is not a valid BIP-39 English phrase/);
  });
});
