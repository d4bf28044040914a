//! A small binary encoding for checkpoints: little-endian integers, length-prefixed byte
//! strings and vectors, and an xxh3 checksum over the whole, so that a checkpoint cut short
//! or changed on disk is refused instead of read.
//!
//! A run under a memory limit that may be resumed (`dedup --resume`) saves the state of each
//! finished stage this way; the layout belongs to one version of neardup (the checkpoint's
//! manifest names the version, and another version starts over).

use crate::hash::hash64;
use crate::{Error, Result};

/// Builds an encoding.
#[derive(Debug, Default)]
pub struct Encoder {
    bytes: Vec<u8>,
}

impl Encoder {
    /// An empty encoding.
    pub fn new() -> Encoder {
        Encoder::default()
    }

    /// Appends one byte.
    pub fn u8(&mut self, value: u8) {
        self.bytes.push(value);
    }

    /// Appends a `bool` as one byte.
    pub fn bool(&mut self, value: bool) {
        self.bytes.push(u8::from(value));
    }

    /// Appends a `u32`.
    pub fn u32(&mut self, value: u32) {
        self.bytes.extend_from_slice(&value.to_le_bytes());
    }

    /// Appends a `u64`.
    pub fn u64(&mut self, value: u64) {
        self.bytes.extend_from_slice(&value.to_le_bytes());
    }

    /// Appends a `u128`.
    pub fn u128(&mut self, value: u128) {
        self.bytes.extend_from_slice(&value.to_le_bytes());
    }

    /// Appends an `f64` (its bits).
    pub fn f64(&mut self, value: f64) {
        self.u64(value.to_bits());
    }

    /// Appends a byte string, length first.
    pub fn bytes(&mut self, value: &[u8]) {
        self.u64(value.len() as u64);
        self.bytes.extend_from_slice(value);
    }

    /// Appends a string, length first.
    pub fn str(&mut self, value: &str) {
        self.bytes(value.as_bytes());
    }

    /// Appends a slice, length first, each item by `item`.
    pub fn seq<T>(&mut self, items: &[T], mut item: impl FnMut(&mut Encoder, &T)) {
        self.u64(items.len() as u64);
        for value in items {
            item(self, value);
        }
    }

    /// The encoding, followed by its checksum.
    pub fn finish(mut self) -> Vec<u8> {
        let sum = hash64(&self.bytes);
        self.u64(sum);
        self.bytes
    }
}

/// Reads an encoding made by [`Encoder`].
#[derive(Debug)]
pub struct Decoder<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Decoder<'a> {
    /// A decoder over `bytes` (an [`Encoder::finish`] output).
    ///
    /// # Errors
    /// `bytes` is too short or its checksum does not match (parameter `checkpoint`).
    pub fn new(bytes: &'a [u8]) -> Result<Decoder<'a>> {
        if bytes.len() < 8 {
            return Err(corrupt("shorter than its checksum"));
        }
        let (body, sum) = bytes.split_at(bytes.len() - 8);
        let mut expected = [0u8; 8];
        expected.copy_from_slice(sum);
        if hash64(body) != u64::from_le_bytes(expected) {
            return Err(corrupt("its checksum does not match"));
        }
        Ok(Decoder { bytes: body, at: 0 })
    }

    fn take(&mut self, count: usize) -> Result<&'a [u8]> {
        if self.bytes.len() - self.at < count {
            return Err(corrupt("it ends early"));
        }
        let taken = &self.bytes[self.at..self.at + count];
        self.at += count;
        Ok(taken)
    }

    /// Reads one byte.
    ///
    /// # Errors
    /// The encoding ends early (as every read).
    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    /// Reads a `bool`.
    ///
    /// # Errors
    /// The encoding ends early, or the byte is not 0 or 1.
    pub fn bool(&mut self) -> Result<bool> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(corrupt(format!("{other} where a bool was expected"))),
        }
    }

    /// Reads a `u32`.
    ///
    /// # Errors
    /// The encoding ends early.
    pub fn u32(&mut self) -> Result<u32> {
        let mut value = [0u8; 4];
        value.copy_from_slice(self.take(4)?);
        Ok(u32::from_le_bytes(value))
    }

    /// Reads a `u64`.
    ///
    /// # Errors
    /// The encoding ends early.
    pub fn u64(&mut self) -> Result<u64> {
        let mut value = [0u8; 8];
        value.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(value))
    }

    /// Reads a `u128`.
    ///
    /// # Errors
    /// The encoding ends early.
    pub fn u128(&mut self) -> Result<u128> {
        let mut value = [0u8; 16];
        value.copy_from_slice(self.take(16)?);
        Ok(u128::from_le_bytes(value))
    }

    /// Reads an `f64`.
    ///
    /// # Errors
    /// The encoding ends early.
    pub fn f64(&mut self) -> Result<f64> {
        Ok(f64::from_bits(self.u64()?))
    }

    /// A length, checked against the bytes left (each item takes at least `least` bytes).
    fn length(&mut self, least: usize) -> Result<usize> {
        let length = self.u64()?;
        let left = (self.bytes.len() - self.at) as u64;
        if length.saturating_mul(least.max(1) as u64) > left {
            return Err(corrupt("it ends early"));
        }
        usize::try_from(length).map_err(|_| corrupt("a length does not fit"))
    }

    /// Reads a byte string.
    ///
    /// # Errors
    /// The encoding ends early.
    pub fn bytes(&mut self) -> Result<&'a [u8]> {
        let length = self.length(1)?;
        self.take(length)
    }

    /// Reads a string.
    ///
    /// # Errors
    /// The encoding ends early or the string is not UTF-8.
    pub fn str(&mut self) -> Result<&'a str> {
        std::str::from_utf8(self.bytes()?).map_err(|_| corrupt("a string is not UTF-8"))
    }

    /// Reads a sequence written by [`Encoder::seq`], each item by `item`, which reads at
    /// least `least` bytes (taken as 1 when 0: a length is checked against the bytes left
    /// before anything is allocated).
    ///
    /// # Errors
    /// The encoding ends early, or `item` fails.
    pub fn seq<T>(
        &mut self,
        least: usize,
        mut item: impl FnMut(&mut Decoder<'a>) -> Result<T>,
    ) -> Result<Vec<T>> {
        let length = self.length(least)?;
        let mut items = Vec::with_capacity(length);
        for _ in 0..length {
            items.push(item(self)?);
        }
        Ok(items)
    }

    /// Refuses bytes left over.
    ///
    /// # Errors
    /// Bytes are left.
    pub fn end(self) -> Result<()> {
        match self.at == self.bytes.len() {
            true => Ok(()),
            false => Err(corrupt("it has bytes past its end")),
        }
    }
}

/// The error of a checkpoint that cannot be read.
pub fn corrupt(why: impl std::fmt::Display) -> Error {
    Error::invalid(
        "checkpoint",
        format!("the checkpoint cannot be read: {why}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_back_in_order() {
        let mut e = Encoder::new();
        e.u8(7);
        e.bool(true);
        e.u32(70_000);
        e.u64(u64::MAX - 1);
        e.u128(1 << 100);
        e.f64(0.25);
        e.str("文本");
        e.seq(&[1u32, 2, 3], |e, &v| e.u32(v));
        let bytes = e.finish();
        let mut d = Decoder::new(&bytes).unwrap();
        assert_eq!(d.u8().unwrap(), 7);
        assert!(d.bool().unwrap());
        assert_eq!(d.u32().unwrap(), 70_000);
        assert_eq!(d.u64().unwrap(), u64::MAX - 1);
        assert_eq!(d.u128().unwrap(), 1 << 100);
        assert_eq!(d.f64().unwrap(), 0.25);
        assert_eq!(d.str().unwrap(), "文本");
        assert_eq!(d.seq(4, |d| d.u32()).unwrap(), vec![1, 2, 3]);
        d.end().unwrap();
    }

    #[test]
    fn a_changed_or_short_encoding_is_refused() {
        let mut e = Encoder::new();
        e.seq(&[5u64; 10], |e, &v| e.u64(v));
        let bytes = e.finish();
        let mut changed = bytes.clone();
        changed[3] ^= 1;
        let error = Decoder::new(&changed).unwrap_err();
        assert!(error.to_string().contains("checksum"), "{error}");
        assert!(Decoder::new(&bytes[..5]).is_err());
        // A well-formed encoding read as something longer ends early, with no panic.
        let mut d = Decoder::new(&bytes).unwrap();
        assert!(d.seq(16, |d| d.u128()).is_err());
        // A length far past the end is refused before anything is allocated.
        let mut e = Encoder::new();
        e.u64(u64::MAX);
        let bytes = e.finish();
        assert!(Decoder::new(&bytes).unwrap().bytes().is_err());
    }
}
