//! Stable hashing: xxh3, whose output is fixed across platforms and releases, so hashes may
//! be persisted (index segments, fingerprints shipped between machines).

use xxhash_rust::xxh3::{xxh3_128, xxh3_64, xxh3_64_with_seed};

/// 64-bit xxh3 of a byte string.
#[inline]
pub fn hash64(bytes: &[u8]) -> u64 {
    xxh3_64(bytes)
}

/// 64-bit xxh3 of a byte string with a seed, for independent hash families.
#[inline]
pub fn hash64_seeded(bytes: &[u8], seed: u64) -> u64 {
    xxh3_64_with_seed(bytes, seed)
}

/// 128-bit xxh3, used where a collision would merge two distinct documents.
#[inline]
pub fn hash128(bytes: &[u8]) -> u128 {
    xxh3_128(bytes)
}

/// 128-bit hash of a sequence of `u64` values (little-endian bytes), e.g. a shingle set.
pub fn hash128_u64s(values: &[u64]) -> u128 {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    for chunk in values.chunks(512) {
        let mut bytes = [0u8; 512 * 8];
        for (slot, value) in bytes.chunks_exact_mut(8).zip(chunk) {
            slot.copy_from_slice(&value.to_le_bytes());
        }
        hasher.update(&bytes[..chunk.len() * 8]);
    }
    hasher.digest128()
}

/// SplitMix64 finaliser: a fast, well-mixing bijection on `u64`.
#[inline]
pub fn mix64(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}
