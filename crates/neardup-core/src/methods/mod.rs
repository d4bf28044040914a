//! The methods, one module each. To add one: a module here implementing [`crate::Method`],
//! and one line in the method registry of `neardup-pipeline`.

pub mod exact;
pub mod minhash;
pub mod short;
pub mod simhash;
