//! The methods, one module each, and what they share ([`shared`]). To add one: a module here
//! implementing [`crate::Method`] and [`crate::params::Registered`], and one line in
//! [`crate::registry`]. A method imports [`shared`] and [`crate::params`], never another
//! method and never the registry (`supershingle` alone builds on `minhash`, the method it
//! wraps).

pub mod exact;
pub mod imatch;
pub mod minhash;
pub mod segments;
pub mod sentences;
pub mod shared;
pub mod short;
pub mod simhash;
pub mod supershingle;
pub mod topn;
