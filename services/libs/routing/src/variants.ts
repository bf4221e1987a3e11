// Which variant of a split rule a visitor gets: a bucket from 0 to 99 hashed from the visitor's key
// and the rule's id, so one visitor always lands on the same variant of a rule, and different rules
// split the same visitors independently.

/**
 * The visitor's bucket for a rule, 0 to 99: FNV-1a over the key, a NUL and the rule id, then
 * MurmurHash3's finaliser so that every input bit reaches the low bits the bucket is taken from.
 * Not a secret: the key it hashes is already salted per code.
 */
export function variantBucket(visitorKey: string, ruleId: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < visitorKey.length; i++) hash = Math.imul(hash ^ visitorKey.charCodeAt(i), 0x01000193);
  hash = Math.imul(hash, 0x01000193); // the NUL separator: xor with 0 leaves the hash, the multiply remains
  for (let i = 0; i < ruleId.length; i++) hash = Math.imul(hash ^ ruleId.charCodeAt(i), 0x01000193);
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return (hash >>> 0) % 100;
}
