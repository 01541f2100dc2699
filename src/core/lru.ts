/**
 * A map that keeps at most `max` entries, dropping the least recently used one: for values that
 * are pure functions of their key (a rendered QR code of an address), or that carry the key they
 * were made from and are checked against it on every use.
 */
export class Lru<K, V> {
  private readonly map = new Map<K, V>();

  constructor(private readonly max: number) {
    if (!(max >= 1)) throw new RangeError('an LRU holds at least one entry');
  }

  get(key: K): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      // Map keeps insertion order: moved to the end, it is the most recent.
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }

  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as K);
  }

  get size(): number {
    return this.map.size;
  }
}
