//! Hard negatives: a source's opening followed by text of other documents.

use neardup_core::tokenize::is_cjk;

use super::rng::Rng;
use super::sentences::opening_length;
use super::{Benchmark, Category, Context, Origin};

/// How many donor documents a hard negative takes text from, at most.
const MAX_DONORS: usize = 3;
/// How many random draws look for a donor of a different cluster.
const DONOR_DRAWS: usize = 16;

/// Adds a hard negative of `origin`, a cluster of its own, or counts it as skipped.
pub(super) fn add_hard_negative(
    context: &mut Context<'_>,
    origin: &Origin,
    rng: &mut Rng,
    benchmark: &mut Benchmark,
) {
    let Some(negative) = hard_negative(context, origin.index, rng) else {
        benchmark.summary.skipped_hard_negatives += 1;
        return;
    };
    benchmark.summary.hard_negatives += 1;
    let id = format!("{}-hn1", origin.id);
    benchmark.push(origin, id.clone(), negative, id, Category::HardNegative);
}

/// The opening of source `index` followed by text of up to three donors of other clusters
/// (each giving at most half of its characters, taken after its own opening, and not a piece
/// the source contains) until it is as long as the source. `None` for an empty source or
/// when no donor is found.
fn hard_negative(context: &mut Context<'_>, index: usize, rng: &mut Rng) -> Option<String> {
    let text = context.texts[index];
    let total = text.chars().count();
    if total == 0 {
        return None;
    }
    let mut result: String = text.chars().take(opening_length(text)).collect();
    let mut needed = total - opening_length(text);
    for _ in 0..MAX_DONORS {
        let Some(donor) = pick_donor(context, index, rng) else {
            break;
        };
        let piece = donor_piece(context.texts[donor], needed.max(1));
        if text.contains(piece.as_str()) {
            continue;
        }
        context.used_donors[donor] = true;
        needed = needed.saturating_sub(piece.chars().count());
        join_words(&mut result, &piece);
        if needed == 0 {
            break;
        }
    }
    (result.chars().count() > opening_length(text) && result != text).then_some(result)
}

/// A random non-empty text whose cluster differs from that of text `index`, preferably one
/// no hard negative took text from yet and then one that, like it, has (or has not) CJK
/// characters.
fn pick_donor(context: &Context<'_>, index: usize, rng: &mut Rng) -> Option<usize> {
    let cluster = context.clusters[index];
    let cjk = context.texts[index].chars().any(is_cjk);
    let mut best: Option<(usize, usize)> = None;
    for _ in 0..DONOR_DRAWS {
        let donor = rng.below(context.texts.len());
        let text = context.texts[donor];
        if context.clusters[donor] == cluster || text.is_empty() {
            continue;
        }
        let rank = 2 * usize::from(context.used_donors[donor])
            + usize::from(text.chars().any(is_cjk) != cjk);
        if best.is_none_or(|(best_rank, _)| rank < best_rank) {
            best = Some((rank, donor));
        }
        if rank == 0 {
            break;
        }
    }
    best.map(|(_, donor)| donor)
}

/// Up to `wanted` characters of `donor` after its opening (its start if the opening is all of
/// it), and never more than half of it (rounded up).
fn donor_piece(donor: &str, wanted: usize) -> String {
    let total = donor.chars().count();
    let skip = match opening_length(donor) {
        opening if opening < total => opening,
        _ => 0,
    };
    let take = wanted.min(total.div_ceil(2));
    donor.chars().skip(skip).take(take).collect()
}

/// Appends `piece` to `text`, with a space between two Latin words.
fn join_words(text: &mut String, piece: &str) {
    let last = text.chars().next_back();
    let first = piece.chars().next();
    if let (Some(last), Some(first)) = (last, first) {
        let latin = |c: char| !c.is_whitespace() && !is_cjk(c);
        if latin(last) && latin(first) {
            text.push(' ');
        }
    }
    text.push_str(piece);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::tests::{generate, texts};
    use crate::synth::SynthOptions;

    #[test]
    fn hard_negatives_share_the_opening_and_not_the_rest() {
        let texts = texts();
        let options = SynthOptions {
            duplicate_rate: 0.0,
            hard_negatives: 1.0,
            ..Default::default()
        };
        let benchmark = generate(options);
        for negative in benchmark
            .documents
            .iter()
            .filter(|d| d.category == Category::HardNegative)
        {
            let source = &texts[negative.source.unwrap()];
            let opening: String = source.chars().take(opening_length(source)).collect();
            assert!(negative.text.starts_with(&opening), "{negative:?}");
            let rest: String = source.chars().skip(opening.chars().count()).collect();
            assert!(!negative.text.ends_with(&rest), "{negative:?}");
            assert_ne!(&negative.text, source);
        }
    }
}
