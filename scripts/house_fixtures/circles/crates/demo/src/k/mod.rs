pub mod l;
pub mod m;
