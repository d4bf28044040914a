//! The methods, one module each. To add one: a module here implementing [`crate::Method`],
//! and one line in the method registry of `neardup-pipeline`.

pub mod classic;
pub mod exact;
pub mod imatch;
pub mod minhash;
pub mod segments;
pub mod sentences;
pub mod short;
pub mod simhash;
pub mod supershingle;
pub mod topn;
