pub struct M;

pub fn l() -> crate::k::l::L {
    crate::k::l::L(M)
}
