//! `segments`: segmented signatures ("分段签名", segment signatures): the normalised
//! text (spaces left out) is cut into `segments` pieces of equal length, each piece is
//! hashed with its position, and two documents are candidates when at least
//! `min_segments` of their pieces are equal (then verified, see
//! [`crate::methods::shared::classic`]).
//!
//! Strengths and weaknesses (pinned by the tests): substitutions and changes confined to a
//! few places (a changed headline, a corrected figure, a rewritten closing sentence) leave
//! the other pieces equal, and nothing is learned from the corpus; but an insertion or a
//! deletion moves every later boundary, so a text with a sentence added at its start shares
//! no piece with the original. Documents shorter than twice `segments` characters are
//! compared as exact copies only.

use crate::hash::{hash64, mix64};
use crate::methods::shared::classic::{self, ClassicSketch, Verifier};
use crate::methods::shared::params::{normalize_options, normalize_settings, NORMALIZE_PARAMS};
use crate::normalize::Normalizer;
use crate::params::{ParamKind, ParamSpec, Params, Registered, Setting};
use crate::sketch_kind::SketchKind;
use crate::{Error, Join, Method, Result, SketchNotes};

/// The sketch of [`Segments`].
pub type SegmentsSketch = ClassicSketch<{ SketchKind::Segments.byte() }>;

/// The default `segments`.
pub const DEFAULT_SEGMENTS: usize = 8;
/// The default `min_segments`.
pub const DEFAULT_MIN_SEGMENTS: usize = 4;

/// Segmented signatures, M of N.
#[derive(Debug, Clone)]
pub struct Segments {
    normalizer: Normalizer,
    verifier: Verifier,
    segments: usize,
    min_segments: usize,
}

impl Segments {
    /// The pieces of raw `text` (normalised, spaces left out), in order; empty when the
    /// text is too short to cut.
    pub fn pieces(&self, text: &str) -> Vec<String> {
        self.cut(&self.normalizer.normalize(text))
    }

    fn cut(&self, normalized: &str) -> Vec<String> {
        let chars: Vec<char> = normalized.chars().filter(|&c| c != ' ').collect();
        if chars.len() < 2 * self.segments {
            return Vec::new();
        }
        (0..self.segments)
            .map(|i| {
                let start = i * chars.len() / self.segments;
                let end = (i + 1) * chars.len() / self.segments;
                chars[start..end].iter().collect()
            })
            .collect()
    }
}

impl Method for Segments {
    type Sketch = SegmentsSketch;

    fn name(&self) -> &'static str {
        "segments"
    }

    classic::verified_by!(verifier);

    /// Boilerplate lines and edge pieces leave the text before it is cut.
    fn sketch_noted<'t>(&self, text: &'t str, notes: &mut SketchNotes<'t>) -> SegmentsSketch {
        let body = (self.verifier).body(&self.normalizer, text, &mut notes.removed_lines);
        let pieces = self.cut(&body.normalized);
        let keys = (pieces.iter().enumerate())
            .map(|(i, piece)| mix64(hash64(piece.as_bytes()) ^ mix64(i as u64 + 1)))
            .collect::<Vec<u64>>();
        let short = keys.is_empty();
        (self.verifier).sketch(&self.normalizer, (text, &body), keys, short)
    }

    /// Documents sharing at least `min_segments` pieces.
    fn join(&self) -> Join<Self> {
        Join::SharedKeys {
            min: self.min_segments as u32,
            anchors: self.verifier.anchors(),
            priority: Some(|_, sketch, out| sketch.filling_keys(out)),
        }
    }

    fn keys(&self, sketch: &SegmentsSketch, keys: &mut Vec<u64>) {
        keys.extend_from_slice(sketch.keys());
    }

    classic::learns_boilerplate_by!(verifier, normalizer);
}

impl Registered for Segments {
    const NAME: &'static str = "segments";
    const ABOUT: &'static str = "segmented signatures: N pieces, duplicates share M";

    fn params() -> Vec<ParamSpec> {
        let mut params = classic::verify_params();
        params.extend([
            ParamSpec {
                name: "segments",
                kind: ParamKind::Count,
                default: Some("8"),
                help: "Pieces of equal length the text is cut into (N).",
                group: None,
            },
            ParamSpec {
                name: "min_segments",
                kind: ParamKind::Count,
                default: Some("4"),
                help: "Equal pieces that make a candidate pair (M of N).",
                group: None,
            },
        ]);
        params.extend(NORMALIZE_PARAMS.iter().copied());
        params
    }

    fn from_params(params: &Params) -> Result<Segments> {
        let segments: usize = params.get("segments")?.unwrap_or(DEFAULT_SEGMENTS);
        if !(1..=256).contains(&segments) {
            return Err(Error::invalid(
                "segments",
                format!("{segments} (expected 1 to 256)"),
            ));
        }
        let min_segments: usize = params.get("min_segments")?.unwrap_or(DEFAULT_MIN_SEGMENTS);
        if !(1..=segments).contains(&min_segments) {
            return Err(Error::invalid(
                "min_segments",
                format!("{min_segments} (expected 1 to segments = {segments})"),
            ));
        }
        let normalizer = Normalizer::new(normalize_options(params)?);
        Ok(Segments {
            verifier: Verifier::from_params(params, &normalizer)?,
            normalizer,
            segments,
            min_segments,
        })
    }

    fn settings(&self) -> Vec<(&'static str, Setting)> {
        let mut settings = self.verifier.settings();
        settings.extend([
            ("segments", Setting::Count(self.segments as u64)),
            ("min_segments", Setting::Count(self.min_segments as u64)),
        ]);
        settings.extend(normalize_settings(self.normalizer.options()));
        settings
    }
}
