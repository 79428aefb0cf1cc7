// Per warm Lambda caches: a Map kept to a size by dropping its oldest entry (insertion order) before adding one.

/** Sets `key` in `map`, first dropping the oldest entry when the map already holds `max`. */
export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  if (map.size >= max && !map.has(key)) map.delete(map.keys().next().value as K);
  map.set(key, value);
}
