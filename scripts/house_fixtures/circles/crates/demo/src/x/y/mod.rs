pub mod z;
