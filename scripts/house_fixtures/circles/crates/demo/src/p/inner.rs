use super::super::q::Q;

pub struct I(pub Q);
