pub mod w;
pub mod y;
