//! Integration tests of the `neardup` binary, one module per subcommand, in one test binary
//! (as ripgrep does: one link step, shared helpers).

mod classic;
mod conveniences;
mod dedup;
mod docs;
mod eval;
mod input;
mod limits;
mod memory;
mod report;
mod rough_edges;
mod safety;
mod serve;
mod short;
mod simhash;
mod spans;
mod stale;
#[cfg(feature = "synth")]
mod synth;
mod templates;
mod tune;
mod util;
