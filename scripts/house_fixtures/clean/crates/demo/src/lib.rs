//! The demo crate: `a`'s children name each other one way only.
pub mod a;
pub mod literals;

pub use a::b::Y;
