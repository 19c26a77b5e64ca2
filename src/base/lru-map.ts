/** A key and its value, in a list from least to most recently used. */
interface Node<K, V> {
  key: K;
  value: V;
  older: Node<K, V> | undefined;
  newer: Node<K, V> | undefined;
}

/**
 * A Map that keeps its use order, for every cache bounded by least recent use (the answer cache, the metadata
 * lookup's, the status page's readers and pages). The order is a linked list of its own, not the Map's insertion
 * order: taking the oldest from the front of a Map that entries keep leaving (delete, then set again) slowed each
 * insert of a full cache to about 100 µs (an audit measured it), as the front filled with holes. Bounds are the
 * user's: `set` evicts nothing, `oldest` and `delete` are how a user makes room.
 */
export class LruMap<K, V> {
  private readonly nodes = new Map<K, Node<K, V>>();
  private head: Node<K, V> | undefined; // least recently used
  private tail: Node<K, V> | undefined; // most recently used

  get size(): number {
    return this.nodes.size;
  }

  /** The value, now the most recently used. */
  get(key: K): V | undefined {
    const n = this.nodes.get(key);
    if (!n) return undefined;
    this.touch(n);
    return n.value;
  }

  /** The value, its place in the use order unchanged. */
  peek(key: K): V | undefined {
    return this.nodes.get(key)?.value;
  }

  /** Sets the value, now the most recently used. */
  set(key: K, value: V): void {
    const n = this.nodes.get(key);
    if (n) {
      n.value = value;
      this.touch(n);
      return;
    }
    const added: Node<K, V> = { key, value, older: undefined, newer: undefined };
    this.nodes.set(key, added);
    this.append(added);
  }

  delete(key: K): boolean {
    const n = this.nodes.get(key);
    if (!n) return false;
    this.nodes.delete(key);
    this.unlink(n);
    return true;
  }

  /** The least recently used key, the next to go; undefined when empty. */
  oldest(): K | undefined {
    return this.head?.key;
  }

  clear(): void {
    this.nodes.clear();
    this.head = this.tail = undefined;
  }

  private touch(n: Node<K, V>): void {
    if (n === this.tail) return;
    this.unlink(n);
    this.append(n);
  }

  private append(n: Node<K, V>): void {
    n.older = this.tail;
    n.newer = undefined;
    if (this.tail) this.tail.newer = n;
    else this.head = n;
    this.tail = n;
  }

  private unlink(n: Node<K, V>): void {
    if (n.older) n.older.newer = n.newer;
    else this.head = n.newer;
    if (n.newer) n.newer.older = n.older;
    else this.tail = n.older;
    n.older = n.newer = undefined;
  }
}
