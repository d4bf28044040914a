//! A frozen [`KeyLevel`] as bytes, for the level files a restart loads instead of rebuilding
//! the level from the stored documents: a fixed header, then its arrays as they are in
//! memory (little-endian), so that a load is one sequential read and a copy. The caller adds
//! its own checksum around the bytes.

use super::KeyLevel;

/// The first bytes of an encoded level (and its version).
const MAGIC: &[u8; 8] = b"NDKEYLV1";

/// The header: the magic, then base, docs, shift, and the lengths of the four arrays.
const HEADER: usize = 8 + 8 + 8 + 4 + 4 * 8;

impl KeyLevel {
    /// The level's bytes (see the module documentation).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.encoded_len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.base.to_le_bytes());
        out.extend_from_slice(&(self.docs as u64).to_le_bytes());
        out.extend_from_slice(&self.shift.to_le_bytes());
        for len in [
            self.offsets.len(),
            self.keys.len(),
            self.seqs.len(),
            self.held.len(),
        ] {
            out.extend_from_slice(&(len as u64).to_le_bytes());
        }
        out.extend(self.offsets.iter().flat_map(|o| o.to_le_bytes()));
        out.extend(self.keys.iter().flatten());
        out.extend(self.seqs.iter().flat_map(|s| s.to_le_bytes()));
        out.extend(self.held.iter().flat_map(|h| h.to_le_bytes()));
        out
    }

    /// The length of [`KeyLevel::encode`]'s bytes.
    pub fn encoded_len(&self) -> usize {
        HEADER
            + self.offsets.len() * 4
            + self.keys.len() * 5
            + self.seqs.len() * 4
            + self.held.len() * 8
    }

    /// The level encoded in `bytes`, checked for what queries rely on (bucket starts in
    /// order and within the keys, one seq per key, the documents counted in the held bits),
    /// so that damaged bytes are refused rather than read out of bounds.
    ///
    /// # Errors
    /// What is wrong, in words.
    pub fn decode(bytes: &[u8]) -> Result<KeyLevel, String> {
        let header = bytes
            .get(..HEADER)
            .ok_or_else(|| format!("{} bytes: shorter than a level's header", bytes.len()))?;
        if &header[..8] != MAGIC {
            return Err("not a key level (wrong magic bytes)".to_owned());
        }
        let word = |at: usize| u64::from_le_bytes(header[at..at + 8].try_into().unwrap_or([0; 8]));
        let (base, docs) = (word(8), word(16));
        let shift = u32::from_le_bytes(header[24..28].try_into().unwrap_or([0; 4]));
        let lens: Vec<usize> = (0..4).map(|i| word(28 + 8 * i) as usize).collect();
        let (n_offsets, n_keys, n_seqs, n_held) = (lens[0], lens[1], lens[2], lens[3]);
        let want = (n_offsets.checked_mul(4))
            .zip(n_keys.checked_mul(5))
            .zip(n_seqs.checked_mul(4))
            .zip(n_held.checked_mul(8))
            .and_then(|(((a, b), c), d)| {
                HEADER
                    .checked_add(a)?
                    .checked_add(b)?
                    .checked_add(c)?
                    .checked_add(d)
            });
        if want != Some(bytes.len()) {
            return Err(format!(
                "{} bytes where its header announces {want:?}",
                bytes.len()
            ));
        }
        let bits = 32u32.checked_sub(shift).filter(|&b| b <= 28);
        if n_seqs != n_keys || bits.is_none_or(|b| n_offsets != (1usize << b) + 1) {
            return Err(format!(
                "inconsistent arrays: {n_offsets} bucket starts at shift {shift}, {n_keys} keys, \
                 {n_seqs} seqs"
            ));
        }
        let mut at = HEADER;
        let mut take = |len: usize| {
            let slice = &bytes[at..at + len];
            at += len;
            slice
        };
        let offsets: Vec<u32> = (take(n_offsets * 4).chunks_exact(4))
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let keys: Vec<[u8; 5]> = (take(n_keys * 5).chunks_exact(5))
            .map(|c| [c[0], c[1], c[2], c[3], c[4]])
            .collect();
        let seqs: Vec<u32> = (take(n_seqs * 4).chunks_exact(4))
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let held: Vec<u64> = (take(n_held * 8).chunks_exact(8))
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect();
        let ordered = offsets.first() == Some(&0)
            && offsets.windows(2).all(|w| w[0] <= w[1])
            && offsets.last().is_some_and(|&l| l as usize == n_keys);
        if !ordered {
            return Err("bucket starts out of order or past the keys".to_owned());
        }
        let counted: u64 = held.iter().map(|w| u64::from(w.count_ones())).sum();
        if counted != docs {
            return Err(format!("{docs} documents announced, {counted} held"));
        }
        Ok(KeyLevel {
            base,
            docs: docs as usize,
            shift,
            offsets,
            keys,
            seqs,
            held,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::levels::Level;

    fn level() -> KeyLevel {
        let mut pairs: Vec<(u64, u64)> = (0..5000u64)
            .flat_map(|id| {
                (0..3).map(move |k| {
                    (
                        (id / 3 + k).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 24,
                        100 + id,
                    )
                })
            })
            .collect();
        pairs.sort_unstable();
        let mut level = KeyLevel::with_capacity(pairs.len(), 100);
        for (key, id) in pairs {
            level.push(key, id);
        }
        level.finish()
    }

    #[test]
    fn a_level_decodes_to_itself() {
        let level = level();
        let bytes = level.encode();
        assert_eq!(bytes.len(), level.encoded_len());
        let back = KeyLevel::decode(&bytes).unwrap();
        assert_eq!(back.encode(), bytes);
        assert_eq!(back.docs(), 5000);
        for key in [0u64, 7, 4999] {
            let key = key.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            assert_eq!(back.range(key), level.range(key));
        }
    }

    #[test]
    fn damaged_bytes_are_refused_not_read_out_of_bounds() {
        let bytes = level().encode();
        assert!(KeyLevel::decode(&bytes[..bytes.len() - 1]).is_err());
        assert!(KeyLevel::decode(&bytes[..10]).is_err());
        let mut wrong = bytes.clone();
        wrong[0] = b'X';
        assert!(KeyLevel::decode(&wrong).unwrap_err().contains("magic"));
        // A bucket start past the keys.
        let mut wrong = bytes.clone();
        wrong[HEADER + 4..HEADER + 8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(KeyLevel::decode(&wrong)
            .unwrap_err()
            .contains("out of order"));
        // A held bit lost.
        let mut wrong = bytes.clone();
        let last = wrong.len() - 1;
        wrong[last] ^= 0x80;
        assert!(KeyLevel::decode(&wrong).is_err());
        // A length that overflows.
        let mut wrong = bytes;
        wrong[36..44].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(KeyLevel::decode(&wrong).is_err());
    }
}
