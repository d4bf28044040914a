//! Normalises arbitrary text with every combination of options, HTML stripping included: no
//! panic, and no leading, trailing or doubled space when punctuation is folded.
#![no_main]

use libfuzzer_sys::fuzz_target;
use neardup_core::normalize::{NormalizeOptions, Normalizer};

fuzz_target!(|data: &[u8]| {
    let Some((&flags, body)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(body);
    let normalizer = Normalizer::new(NormalizeOptions {
        lowercase: flags & 1 != 0,
        strip_punctuation: flags & 2 != 0,
        strip_html: flags & 4 != 0,
        ..NormalizeOptions::default()
    });
    let out = normalizer.normalize(&text);
    if flags & 2 != 0 {
        assert!(!out.starts_with(' ') && !out.ends_with(' ') && !out.contains("  "));
    }
});
