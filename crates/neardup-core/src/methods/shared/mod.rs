//! What several methods share, so that the methods import these modules and never each
//! other: the parameter groups ([`params`]), the verification choice and thresholds
//! ([`verify`]), the template check on marked sets ([`template`]), and the sketch and verifier
//! of the classic fingerprints ([`classic`]).

pub mod classic;
pub mod params;
pub mod template;
pub mod verify;
