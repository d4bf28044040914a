//! The cluster browser: each sampled cluster as a collapsible block in which every duplicate
//! stands beside its representative, with the differences highlighted.

use std::fmt::Write;

use super::diff::{push_escaped, side_by_side, Truncated};
use super::sample::SampledCluster;
use super::{id_text, thousands, ReportData, ReportOptions};

/// How many clusters of a list are open when the page loads.
const OPEN_CLUSTERS: usize = 3;

/// Appends the clusters of one list.
pub(super) fn push_clusters(
    out: &mut String,
    data: &ReportData<'_>,
    clusters: &[SampledCluster],
    options: &ReportOptions,
) {
    for (index, cluster) in clusters.iter().enumerate() {
        push_cluster(out, data, cluster, options, index < OPEN_CLUSTERS);
    }
}

fn push_cluster(
    out: &mut String,
    data: &ReportData<'_>,
    cluster: &SampledCluster,
    options: &ReportOptions,
    open: bool,
) {
    let Some(representative) = data.documents.get(cluster.representative as usize) else {
        return;
    };
    out.push_str(if open {
        r#"<details class="cluster" open><summary>"#
    } else {
        r#"<details class="cluster"><summary>"#
    });
    let _ = write!(
        out,
        "<strong>{} documents</strong>, representative <code>",
        thousands(cluster.size as u64)
    );
    push_escaped(out, &id_text(representative.id));
    out.push_str("</code>");
    if let Some((low, high)) = cluster.similarity_range {
        let _ = write!(
            out,
            r#" <span class="muted">similarity {low:.3} to {high:.3}</span>"#
        );
    }
    out.push_str("</summary>");
    for &member in &cluster.members {
        if let Some(duplicate) = data.documents.get(member as usize) {
            let similarity = data.assignment.similarity.get(member as usize);
            let pair = Pair {
                representative: representative.text,
                duplicate: duplicate.text,
                duplicate_id: &id_text(duplicate.id),
                representative_id: &id_text(representative.id),
                similarity,
            };
            push_pair(out, &pair, options);
        }
    }
    let hidden = cluster.size - 1 - cluster.members.len();
    if hidden > 0 {
        let _ = write!(
            out,
            "<p class=\"note\">{} more duplicates not shown (the least similar are shown \
             first).</p>",
            thousands(hidden as u64)
        );
    }
    out.push_str("</details>\n");
}

/// A duplicate and its representative.
struct Pair<'a> {
    representative: &'a str,
    representative_id: &'a str,
    duplicate: &'a str,
    duplicate_id: &'a str,
    similarity: Option<f64>,
}

fn push_pair(out: &mut String, pair: &Pair<'_>, options: &ReportOptions) {
    let old = Truncated::new(pair.representative, options.max_chars);
    let new = Truncated::new(pair.duplicate, options.max_chars);
    let diff = side_by_side(old.shown, new.shown, options.diff_timeout);
    out.push_str(r#"<div class="pair"><div class="side"><div class="meta">representative <code>"#);
    push_escaped(out, pair.representative_id);
    out.push_str("</code></div>");
    push_text(out, &diff.old, &old);
    out.push_str(r#"</div><div class="side"><div class="meta">duplicate <code>"#);
    push_escaped(out, pair.duplicate_id);
    out.push_str("</code>");
    if let Some(similarity) = pair.similarity {
        let _ = write!(out, ", similarity {similarity:.3}");
    }
    if !diff.differs && !old.is_cut() && !new.is_cut() {
        out.push_str(r#", <span class="same">identical text</span>"#);
    }
    out.push_str("</div>");
    push_text(out, &diff.new, &new);
    out.push_str("</div></div>\n");
}

/// The marked-up text of one side and, if it was cut, a note saying so.
fn push_text(out: &mut String, html: &str, text: &Truncated<'_>) {
    out.push_str(r#"<div class="text">"#);
    out.push_str(html);
    out.push_str("</div>");
    if text.is_cut() {
        let _ = write!(
            out,
            r#"<div class="cut">Truncated: the first {} of {} characters are shown.</div>"#,
            thousands(text.shown_chars as u64),
            thousands(text.total_chars as u64)
        );
    }
}
