/**
 * Loaded into a spawned CLI with NODE_OPTIONS=--import, so a test can give the CLI a remote
 * whose name is not a loopback name (http://pay.example.test) without any traffic leaving the
 * machine: every name listed in CRYPTOPAY_TEST_HOSTS (comma-separated) resolves to 127.0.0.1,
 * so does `localhost`, an IP literal stands for itself, and any other name fails as unknown, so a test process never asks a real DNS server.
 * The callback sender's c-ares resolver (src/callbacks/resolve.ts) is answered the same way:
 * listed names have 127.0.0.1, others do not exist (then it reads the hosts file itself).
 */
import dns from 'node:dns';
import { isIP } from 'node:net';

const known = new Set((process.env.CRYPTOPAY_TEST_HOSTS ?? '').split(',').filter(Boolean).map((h) => h.toLowerCase()));

function lookup(hostname, options, callback) {
  if (typeof options === 'function') {
    callback = options;
    options = {};
  }
  if (typeof options === 'number') options = { family: options };
  const name = String(hostname).toLowerCase();
  process.nextTick(() => {
    const family = isIP(name);
    if (family) return options?.all ? callback(null, [{ address: name, family }]) : callback(null, name, family);
    if (!known.has(name) && name !== 'localhost') {
      const e = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
      return callback(e);
    }
    if (options?.all) return callback(null, [{ address: '127.0.0.1', family: 4 }]);
    callback(null, '127.0.0.1', 4);
  });
}

dns.lookup = lookup;
dns.promises.lookup = (hostname, options = {}) =>
  new Promise((resolve, reject) => lookup(hostname, options, (e, address, family) => (e ? reject(e) : resolve(options.all ? address : { address, family }))));

const noSuchName = (hostname, syscall) => Object.assign(new Error(`${syscall} ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname, syscall });
dns.promises.Resolver.prototype.resolve4 = async function resolve4(hostname) {
  if (known.has(String(hostname).toLowerCase())) return ['127.0.0.1'];
  throw noSuchName(hostname, 'queryA');
};
dns.promises.Resolver.prototype.resolve6 = async function resolve6(hostname) {
  if (known.has(String(hostname).toLowerCase())) throw Object.assign(new Error(`queryAaaa ENODATA ${hostname}`), { code: 'ENODATA', hostname, syscall: 'queryAaaa' });
  throw noSuchName(hostname, 'queryAaaa');
};
