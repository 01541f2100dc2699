import { createHash } from 'node:crypto';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../helpers/cli.js';
import { sandbox, SLOW, withMerchant, type Env } from './_support.js';
import { sign as signBody } from '../../src/signing/index.js';

interface Vector {
  name: string;
  body: string;
  secret: string;
  canonical: string;
  sign: string;
}
const VECTORS: Vector[] = JSON.parse(
  readFileSync(fileURLToPath(new URL('../../../shared/spec/signing-vectors.json', import.meta.url)), 'utf8'),
);

/** A secret that cannot appear by accident in any output. */
const SECRET = 'sk_cli_test_Zq9VwX3pL7mN2rT8yB4c';
const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

const s = sandbox();
/** Every sign call of this file, with the secret it was given: none may print it. */
const calls: Array<{ secret: string; r: CliResult; args: string[] }> = [];
async function cli(args: string[], opts: { secret?: string | null; input?: string; env?: Env } = {}): Promise<CliResult> {
  const secret = opts.secret === undefined ? SECRET : opts.secret;
  const r = await s.bare(args, { input: opts.input, env: { CRYPTOPAY_SECRET: secret ?? undefined, ...opts.env } });
  calls.push({ secret: secret ?? SECRET, r, args });
  return r;
}

/** A one-letter secret such as the vectors' "k" occurs in ordinary words: no leak check can see it. */
const recognisable = (secret: string) => secret.length >= 4 || /[^\x00-\x7f]/.test(secret);

afterAll(() => {
  expect(calls.filter((c) => recognisable(c.secret)).length).toBeGreaterThan(40);
  for (const { secret, r, args } of calls.filter((c) => recognisable(c.secret))) {
    expect(r.stdout, `stdout of sign ${args.join(' ')}`).not.toContain(secret);
    expect(r.stderr, `stderr of sign ${args.join(' ')}`).not.toContain(secret);
  }
});

describe.concurrent('sign', { timeout: SLOW }, () => {
  it('prints exactly the signature of every vector of signing-vectors.json (--body, secret from CRYPTOPAY_SECRET)', async () => {
    expect(VECTORS.length).toBeGreaterThanOrEqual(6);
    const results = await Promise.all(VECTORS.map((v) => cli(['sign', '--body', v.body], { secret: v.secret })));
    results.forEach((r, i) => {
      expect(r, VECTORS[i]!.name).toEqual({ code: 0, stdout: `${VECTORS[i]!.sign}\n`, stderr: '' });
    });
  });

  it('--explain prints each vector\'s canonical string ending in <secret>, never the secret', async () => {
    const results = await Promise.all(VECTORS.map((v) => cli(['sign', '--explain', '--body', v.body], { secret: v.secret })));
    results.forEach((r, i) => {
      const v = VECTORS[i]!;
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`canonical  ${v.canonical}<secret>\nsign       ${v.sign}\n`);
    });
  });

  it('sign verify: exit 0 for each vector, exit 1 once a field or the secret changes', async () => {
    const withSign = (v: Vector) => JSON.stringify({ ...JSON.parse(v.body), sign: v.sign });
    const upper = (v: Vector) => JSON.stringify({ ...JSON.parse(v.body), sign: v.sign.toUpperCase() });
    const tampered = (v: Vector) => JSON.stringify({ ...JSON.parse(v.body), sign: v.sign, nonce: 'other' });
    const [valid, validUpper, bad, wrongSecret] = await Promise.all([
      Promise.all(VECTORS.map((v) => cli(['sign', 'verify', '--body', withSign(v)], { secret: v.secret }))),
      Promise.all(VECTORS.slice(0, 2).map((v) => cli(['sign', 'verify', '--body', upper(v)], { secret: v.secret }))),
      Promise.all(VECTORS.map((v) => cli(['sign', 'verify', '--body', tampered(v)], { secret: v.secret }))),
      cli(['sign', 'verify', '--body', withSign(VECTORS[0]!)], { secret: `${VECTORS[0]!.secret}x` }),
    ]);
    for (const r of [...valid, ...validUpper]) expect(r).toEqual({ code: 0, stdout: 'signature valid\n', stderr: '' });
    for (const r of [...bad, wrongSecret]) {
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/signature does not match/);
    }
  });

  it("sign verify without a secret checks with the local ledger's secret of the body's mchId, as listen does; none there: the usage error says what gives one", async () => {
    const m = await withMerchant();
    const fields = { mchId: m.mchId, eventId: 'evt_1', event: 'order.paid', oid: 'A-1', amount: '10', timestamp: 1_795_000_000_000 };
    const body = JSON.stringify({ ...fields, sign: signBody(fields, m.secret) });
    const tampered = JSON.stringify({ ...JSON.parse(body), amount: '11' });
    const stranger = JSON.stringify({ ...JSON.parse(body), mchId: 'M999999' });
    const [ok, bad, unknown, noLedger] = await Promise.all([
      m.run(['sign', 'verify', '--body', body]),
      m.run(['sign', 'verify', '--body', tampered]),
      m.run(['sign', 'verify', '--body', stranger]),
      sandbox().bare(['sign', 'verify', '--body', body]),
    ]);
    expect(ok).toEqual({ code: 0, stdout: 'signature valid\n', stderr: '' });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/signature does not match/);
    for (const r of [unknown, noLedger]) {
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('no merchant secret: set CRYPTOPAY_SECRET, pass --secret-file FILE, use a profile that has one, or verify a body of a merchant of the local ledger (--db)');
    }
    for (const r of [ok, bad, unknown, noLedger]) expect(r.stdout + r.stderr).not.toContain(m.secret);
  });

  it('sign verify with key=value fields, --json and --explain', async () => {
    const sig = sha(`a=1&b=2${SECRET}`);
    const [ok, okJson, badJson, explained, noSign] = await Promise.all([
      cli(['sign', 'verify', 'a=1', 'b=2', `sign=${sig}`]),
      cli(['sign', 'verify', 'a=1', 'b=2', `sign=${sig}`, '--json']),
      cli(['--json', 'sign', 'verify', 'a=1', 'b=3', `sign=${sig}`]),
      cli(['sign', 'verify', '--explain', 'a=1', 'b=2', `sign=${sig}`]),
      cli(['sign', 'verify', 'a=1']),
    ]);
    expect(ok).toEqual({ code: 0, stdout: 'signature valid\n', stderr: '' });
    expect(okJson.code).toBe(0);
    expect(JSON.parse(okJson.stdout)).toEqual({ valid: true });
    expect(badJson.code).toBe(1);
    expect(JSON.parse(badJson.stdout)).toEqual({ valid: false });
    expect(explained.code).toBe(0);
    expect(explained.stdout).toBe('canonical  a=1&b=2<secret>\nsignature valid\n');
    expect(noSign.code).toBe(2);
    expect(noSign.stderr).toMatch(/no sign field/);
  });

  it('signs an amount the service would refuse, and says so on stderr (a merchant developer signed 1e2 and learnt it from a 400)', async () => {
    const [exp, dot, num, fine] = await Promise.all([
      cli(['sign', 'oid=A-1', 'uid=u1', 'amount=1e2']),
      cli(['sign', 'oid=A-1', 'uid=u1', 'amount=.5']),
      cli(['sign', '--body', '{"oid":"A-1","uid":"u1","amount":10}']),
      cli(['sign', 'oid=A-1', 'uid=u1', 'amount=10.5']),
    ]);
    expect(exp).toEqual({ code: 0, stdout: `${sha(`amount=1e2&oid=A-1&uid=u1${SECRET}`)}\n`, stderr: 'warning: amount "1e2" is not a plain decimal string such as "10.5": the service refuses it (signed as given)\n' });
    expect(dot.stderr).toBe('warning: amount ".5" is not a plain decimal string such as "10.5": the service refuses it (signed as given)\n');
    expect(num.stderr).toBe('warning: amount 10 is not a plain decimal string such as "10.5": the service refuses it (signed as given)\n');
    expect(fine).toEqual({ code: 0, stdout: `${sha(`amount=10.5&oid=A-1&uid=u1${SECRET}`)}\n`, stderr: '' });
  });

  // A new-user trial: `sign --mch-id M… oid=…` without --fill dropped the merchant without a word,
  // and the body went to the API, which refused it for three missing fields.
  it('--mch-id without --fill: signed as given, and stderr says the merchant goes into the body only with --fill', async () => {
    const [given, inBody] = await Promise.all([
      cli(['sign', '--mch-id', 'M100002', 'oid=Y-1', 'uid=u1', 'amount=1', '--json']),
      cli(['sign', '--mch-id', 'M100002', 'mchId=M100002', 'oid=Y-1', 'uid=u1', 'amount=1']),
    ]);
    expect(given.code).toBe(0);
    expect(JSON.parse(given.stdout)).toEqual({ oid: 'Y-1', uid: 'u1', amount: '1', sign: sha(`amount=1&oid=Y-1&uid=u1${SECRET}`) });
    expect(given.stderr).toBe('note: merchant M100002 (--mch-id or CRYPTOPAY_MCH_ID) goes into the body only with --fill: this body has no mchId, timestamp, nonce, and the service refuses a request without them (signed as given)\n');
    expect(inBody).toEqual({ code: 0, stdout: `${sha(`amount=1&mchId=M100002&oid=Y-1&uid=u1${SECRET}`)}\n`, stderr: '' });
  });

  it('key=value fields, a body on stdin and --body give the same signature', async () => {
    const expected = sha(`amount=10&oid=A-1&uid=u1${SECRET}`);
    const [fields, stdin, body, mixed] = await Promise.all([
      cli(['sign', 'oid=A-1', 'uid=u1', 'amount=10']),
      cli(['sign'], { input: '{"uid":"u1","amount":"10","oid":"A-1"}' }),
      cli(['sign', '--body', '{"amount":"10","oid":"A-1","uid":"u1","memo":""}']),
      cli(['sign', '--body', '{"amount":"10","oid":"A-1"}', 'uid=u1']),
    ]);
    for (const r of [fields, stdin, body, mixed]) expect(r).toEqual({ code: 0, stdout: `${expected}\n`, stderr: '' });
    // A value keeps everything after the first "=", spaces included.
    const eq = await cli(['sign', 'remark=a=b&c', 'memo= x ']);
    expect(eq.stdout).toBe(`${sha(`memo= x &remark=a=b&c${SECRET}`)}\n`);
  });

  it('--json prints the body with its sign; --fill adds timestamp, nonce and, with --mch-id, mchId', async () => {
    const before = Date.now();
    const [plain, filled, filledAgain, keep] = await Promise.all([
      cli(['sign', '--json', 'oid=A-1', 'uid=u1']),
      cli(['sign', '--fill', '--mch-id', 'M100001', 'oid=A-1', 'uid=u1', 'amount=10', '--json']),
      cli(['--json', '--mch-id', 'M100001', 'sign', '--fill', 'oid=A-1']),
      cli(['sign', '--fill', '--json', '--body', '{"oid":"A","timestamp":5,"nonce":"mine","mchId":"M7"}', '--mch-id', 'M7']),
    ]);
    expect(JSON.parse(plain.stdout)).toEqual({ oid: 'A-1', uid: 'u1', sign: sha(`oid=A-1&uid=u1${SECRET}`) });

    const body = JSON.parse(filled.stdout);
    expect(Object.keys(body).sort()).toEqual(['amount', 'mchId', 'nonce', 'oid', 'sign', 'timestamp', 'uid']);
    expect(body.mchId).toBe('M100001');
    expect(body.timestamp).toBeGreaterThanOrEqual(before);
    expect(body.timestamp).toBeLessThanOrEqual(Date.now());
    expect(body.nonce).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(body.sign).toBe(sha(`amount=10&mchId=M100001&nonce=${body.nonce}&oid=A-1&timestamp=${body.timestamp}&uid=u1${SECRET}`));
    expect(JSON.parse(filledAgain.stdout).nonce).not.toBe(body.nonce);
    // What is already there is kept.
    expect(JSON.parse(keep.stdout)).toMatchObject({ timestamp: 5, nonce: 'mine', mchId: 'M7' });

    // The filled body verifies as it stands.
    const v = await cli(['sign', 'verify'], { input: filled.stdout });
    expect(v).toEqual({ code: 0, stdout: 'signature valid\n', stderr: '' });
    // Without --mch-id, --fill adds no mchId.
    const noMch = await cli(['sign', '--fill', '--json', 'oid=A-1']);
    expect(Object.keys(JSON.parse(noMch.stdout)).sort()).toEqual(['nonce', 'oid', 'sign', 'timestamp']);
    // ...and says so (a new-user trial sent such a body and met "mchId is required").
    const NO_MCH = 'note: this body has no mchId (give --mch-id, CRYPTOPAY_MCH_ID or mchId=): create order needs it, and so does every request to a service with more than one merchant (signed as given)\n';
    expect(noMch.stderr).toBe(NO_MCH);
    const noMchText = await cli(['sign', '--fill', 'oid=A-1']);
    expect(noMchText.code).toBe(0);
    expect(noMchText.stderr).toBe(NO_MCH);
    expect(JSON.parse(noMchText.stdout).mchId).toBeUndefined();
  });

  it('--fill without --json prints the filled body it signed: the signature alone would be useless (issue #15 item 9)', async () => {
    const r = await cli(['sign', '--fill', '--mch-id', 'M100001', 'oid=A-1', 'uid=u1', 'amount=10']);
    expect(r.code).toBe(0);
    const body = JSON.parse(r.stdout);
    expect(Object.keys(body).sort()).toEqual(['amount', 'mchId', 'nonce', 'oid', 'sign', 'timestamp', 'uid']);
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    expect(await cli(['sign', 'verify'], { input: r.stdout })).toEqual({ code: 0, stdout: 'signature valid\n', stderr: '' });
  });

  it('--secret-file: mode 0600 is used; a file others can read is refused with exit 2', async () => {
    const f600 = join(s.dir, 'secret-600');
    const f644 = join(s.dir, 'secret-644');
    writeFileSync(f600, `${SECRET}\n`, { mode: 0o600 });
    writeFileSync(f644, `${SECRET}\n`, { mode: 0o600 });
    chmodSync(f600, 0o600);
    chmodSync(f644, 0o644);
    const [ok, open, missing, wins] = await Promise.all([
      cli(['sign', '--secret-file', f600, 'a=1'], { secret: null }),
      cli(['sign', 'a=1', '--secret-file', f644], { secret: null }),
      cli(['sign', '--secret-file', join(s.dir, 'nope'), 'a=1'], { secret: null }),
      // The file is what was asked for, over the environment.
      cli(['sign', '--secret-file', f600, 'a=1'], { secret: 'other-secret-from-env' }),
    ]);
    expect(ok).toEqual({ code: 0, stdout: `${sha(`a=1${SECRET}`)}\n`, stderr: '' });
    expect(wins.stdout).toBe(`${sha(`a=1${SECRET}`)}\n`);
    expect(open.code).toBe(2);
    expect(open.stdout).toBe('');
    expect(open.stderr).toMatch(/can be read by others \(mode 644\).*chmod 600/);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read the secret file \S+: no such file \(ENOENT\)$/m);
  });

  it('a secret on the command line is refused with exit 2 and never echoed', async () => {
    const onLine = 'sk_on_the_line_Vb6Tq1Jm';
    const results = await Promise.all([
      cli(['sign', '--secret', onLine, 'a=1'], { secret: onLine }),
      cli(['sign', 'a=1', `--secret=${onLine}`], { secret: onLine }),
      cli(['--secret', onLine, 'sign', 'verify', 'a=1', 'sign=00'], { secret: onLine }),
      cli(['--secret', onLine, 'order', 'list'], { secret: onLine }),
    ]);
    for (const r of results) {
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/a secret is never taken from a command-line flag.*CRYPTOPAY_SECRET or --secret-file/);
      expect(r.stderr).not.toContain(onLine);
    }
  });

  it('usage errors exit 2: no secret, malformed JSON, a non-object body, a nested value, a field that is not key=value', async () => {
    const [noSecret, emptySecret, malformed, malformedStdin, array, nested, notKv] = await Promise.all([
      cli(['sign', 'a=1'], { secret: null }),
      cli(['sign', 'a=1'], { secret: null, env: { CRYPTOPAY_SECRET: '' } }),
      cli(['sign', '--body', '{"a":1,']),
      cli(['sign'], { input: 'oid=A-1' }),
      cli(['sign', '--body', '[1,2]']),
      cli(['sign', '--body', '{"a":{"b":1}}']),
      cli(['sign', 'justtext']),
    ]);
    for (const r of [noSecret, emptySecret, malformed, malformedStdin, array, nested, notKv]) {
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
    }
    expect(noSecret.stderr).toMatch(/no merchant secret: set CRYPTOPAY_SECRET, pass --secret-file FILE, or use a profile that has one/);
    expect(emptySecret.stderr).toMatch(/no merchant secret/);
    expect(malformed.stderr).toMatch(/the body is not valid JSON/);
    expect(malformedStdin.stderr).toMatch(/the body is not valid JSON/);
    expect(array.stderr).toMatch(/must be a JSON object/);
    expect(nested.stderr).toMatch(/field a must be a string, number or boolean; nested values are not accepted/);
    expect(notKv.stderr).toMatch(/"justtext" is not key=value/);
  });

  // Found by an outside review: sign signed what the server refuses, without a word: __proto__=x
  // vanished from the body, a=1 a=2 kept the last, and nonce=a&b was signed. A merchant
  // developer then chased a signature mismatch or a 400 that sign could have named.
  it('refuses what the server would refuse instead of signing it: a field given twice, __proto__, a nonce outside its alphabet', async () => {
    const [twice, proto, protoBody, nonce] = await Promise.all([
      cli(['sign', 'oid=N-1', 'oid=N-2']),
      cli(['sign', '__proto__=x', 'oid=N-1']),
      cli(['sign', '--body', '{"__proto__":"x","oid":"N-1"}']),
      cli(['sign', 'oid=N-1', 'nonce=a&b']),
    ]);
    expect([twice, proto, protoBody, nonce].map((r) => [r.code, r.stdout, r.stderr.trim()])).toEqual([
      [2, '', 'error: field oid is given twice (oid=N-1, oid=N-2): say which one to sign'],
      [2, '', 'error: __proto__ is not a field of any request: the server refuses it'],
      [2, '', 'error: __proto__ is not a field of any request: the server refuses it'],
      [2, '', 'error: nonce must be 1 to 64 characters of A-Z a-z 0-9 _ . : - (no & or =: they would let a signed body be re-split); the server refuses any other'],
    ]);
  });

  // Found by a new-user trial (session 20): --mch-id M100001 with mchId=M100002 among the fields
  // signed for M100002 without a word.
  it('refuses --fill when --mch-id and a field mchId= name two merchants; the same merchant twice is one', async () => {
    const [two, same] = await Promise.all([
      cli(['sign', '--fill', '--mch-id', 'M100001', 'oid=U-2', 'mchId=M100002']),
      cli(['sign', '--fill', '--mch-id', 'M100001', 'oid=U-2', 'mchId=M100001', '--json']),
    ]);
    expect([two.code, two.stdout, two.stderr.trim()]).toEqual([2, '', "error: --mch-id M100001 and the body's merchant M100002 are two merchants: give one"]);
    expect(same.code, same.stderr).toBe(0);
    expect(JSON.parse(same.stdout)).toMatchObject({ oid: 'U-2', mchId: 'M100001' });
  });

  // Found by an outside review: --body '{"amount":"1","amount":"1000"}' was signed over the last
  // value (JSON.parse keeps it), as the server read it; a proxy or a log that reads the first
  // saw 1. Both now refuse a key given twice, spelled alike or through an escape.
  it('refuses a --body that gives a key twice, to sign or to verify, naming the key', async () => {
    const [plain, escaped, verify, nested] = await Promise.all([
      cli(['sign', '--body', '{"oid":"N-1","amount":"1","amount":"1000"}']),
      cli(['sign', '--body', '{"oid":"N-1","amount":"1","am\\u006funt":"1000"}']),
      cli(['sign', 'verify', '--body', '{"oid":"N-1","oid":"N-2","sign":"00"}']),
      // A key's name inside a string value is text, not a key.
      cli(['sign', '--body', '{"oid":"N-1","x":"{\\"oid\\":1}"}']),
    ]);
    expect([plain, escaped, verify].map((r) => [r.code, r.stdout, r.stderr.trim()])).toEqual([
      [2, '', 'error: field amount is given twice in the body: JSON readers disagree on which one counts, so none is signed'],
      [2, '', 'error: field amount is given twice in the body: JSON readers disagree on which one counts, so none is signed'],
      [2, '', 'error: field oid is given twice in the body: JSON readers disagree on which one counts, so none is signed'],
    ]);
    expect(nested.code, nested.stderr).toBe(0);
  });
});
