pub mod a;
pub mod g;
pub mod k;
pub mod p;
pub mod q;
pub mod x;
