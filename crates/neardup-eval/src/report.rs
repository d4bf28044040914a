//! The `neardup report` page: one self-contained HTML file that explains a dedup run.
//!
//! # Overview
//!
//! [`build_html`] turns a run (the documents, the assignment read back from the clusters file
//! and, optionally, the run's statistics) into a single HTML string; it does no I/O, which
//! [`crate::report_io`] does. The page holds:
//!
//! - the summary numbers: documents, kept, removed, clusters, largest cluster and, from the
//!   statistics, the method, its parameters, the time of each stage and the peak memory;
//! - three charts drawn as inline SVG by [`chart`]: cluster sizes, the similarity of every
//!   duplicate to its representative, and the LSH S-curve `1 - (1 - s^r)^b` of the run's bands
//!   and rows with the threshold marked;
//! - a browser of the largest and of the borderline clusters ([`sample`]) in which each
//!   duplicate stands beside its representative with the differences highlighted ([`diff`]).
//!
//! The page loads nothing: the style sheet and a few lines of script (tabs; the page reads
//! the same without them) are embedded, and a Content-Security-Policy forbids every fetch, so
//! it opens offline and cannot leak anything. All document text is escaped. It embeds only the
//! sampled clusters, each text cut to [`ReportOptions::max_chars`], so its size depends on the
//! options, not on the number of documents.
//!
//! # Example
//!
//! ```
//! use neardup_core::cluster::Assignment;
//! use neardup_eval::report::{build_html, Document, ReportData, ReportOptions};
//! use serde_json::json;
//!
//! let ids = [json!(1), json!(2)];
//! let documents = [
//!     Document { id: &ids[0], text: "the quick brown fox" },
//!     Document { id: &ids[1], text: "the quick red fox" },
//! ];
//! let assignment = Assignment {
//!     duplicate_of: vec![None, Some(0)],
//!     similarity: vec![None, Some(0.8)].into(),
//! };
//! let data = ReportData {
//!     inputs: &[],
//!     documents: &documents,
//!     assignment: &assignment,
//!     stats: None,
//! };
//! let html = build_html(&data, &ReportOptions::default());
//! assert!(html.contains("<ins>red</ins>"));
//! ```

pub mod chart;
pub mod diff;
pub mod sample;

mod browser;

use std::fmt::Write;
use std::time::Duration;

use neardup_core::cluster::Assignment;
use neardup_core::lsh::LshParams;
use neardup_pipeline::stats::RunStats;
use serde_json::Value;

use self::chart::{BarChart, Marker, Scale};
use self::diff::push_escaped;
use self::sample::Sample;

/// The page's style sheet.
const STYLE: &str = include_str!("report.css");
/// The page's script (tabs only).
const SCRIPT: &str = include_str!("report.js");
/// Forbids every fetch: the page may only use its own inline style and script.
const CONTENT_SECURITY_POLICY: &str =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'";

/// How much of the run the page shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportOptions {
    /// Clusters in each of the two lists (largest, borderline).
    pub max_clusters: usize,
    /// Duplicates shown per cluster, the least similar first.
    pub max_members: usize,
    /// Characters of each text shown and compared; the rest is cut with a visible note.
    pub max_chars: usize,
    /// Time allowed to one diff before a coarser one is accepted.
    pub diff_timeout: Duration,
}

impl Default for ReportOptions {
    /// 50 clusters per list, 8 duplicates per cluster, 3,000 characters per text, 50 ms per diff.
    fn default() -> ReportOptions {
        ReportOptions {
            max_clusters: 50,
            max_members: 8,
            max_chars: 3000,
            diff_timeout: Duration::from_millis(50),
        }
    }
}

/// One input document.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Document<'a> {
    /// Its id, as in the clusters file.
    pub id: &'a Value,
    /// Its text.
    pub text: &'a str,
}

/// What the page is built from.
#[derive(Debug, Clone, Copy)]
pub struct ReportData<'a> {
    /// The input paths of the run, named in the header.
    pub inputs: &'a [String],
    /// Every document, in input order.
    pub documents: &'a [Document<'a>],
    /// Which document each one duplicates and how similar they are, one entry per document.
    pub assignment: &'a Assignment,
    /// The run's statistics, if its statistics file was given.
    pub stats: Option<&'a PageStats>,
}

/// What the page uses of a `neardup dedup --stats` file ([`neardup_pipeline::stats::RunStats`]).
/// Every field is optional, so files of older versions, or of other methods, still give a
/// page.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PageStats {
    /// Malformed records skipped while reading.
    pub skipped: Option<u64>,
    /// Seconds per stage, in the file's order.
    pub seconds: Vec<(String, f64)>,
    /// Peak resident memory of the run.
    pub peak_rss_bytes: Option<u64>,
    /// The method's name (`minhash`, `exact`, ...).
    pub method: Option<String>,
    /// The similarity threshold of the verification measure.
    pub threshold: Option<f64>,
    /// The verification measure (`jaccard`, `containment`).
    pub measure: Option<String>,
    /// The LSH bands and rows, for methods that use LSH.
    pub lsh: Option<LshParams>,
    /// What boilerplate handling found (the stats file's `boilerplate` section).
    pub boilerplate: Option<neardup_pipeline::stats::BoilerplateReport>,
    /// The templates the template check told apart (the stats file's `templates` section).
    pub templates: Option<neardup_pipeline::stats::TemplatesReport>,
}

impl PageStats {
    /// What the page shows of `stats`; a method without a name (an incomplete file) shows no
    /// method, threshold or parameters.
    pub fn from_stats(stats: &RunStats) -> PageStats {
        let method = &stats.method;
        let params = &method.params;
        let count = |key: &str| {
            (params.get(key))
                .and_then(Value::as_u64)
                .and_then(|n| usize::try_from(n).ok())
        };
        let lsh = match (count("bands"), count("rows")) {
            (Some(bands), Some(rows)) if bands > 0 && rows > 0 => Some(LshParams { bands, rows }),
            _ => None,
        };
        let named = !method.name.is_empty();
        PageStats {
            skipped: Some(stats.skipped),
            seconds: stats.seconds.clone(),
            peak_rss_bytes: stats.peak_rss_bytes,
            method: named.then(|| method.name.clone()),
            threshold: named.then_some(method.threshold),
            measure: (params.get("measure"))
                .and_then(Value::as_str)
                .map(str::to_owned),
            lsh,
            boilerplate: stats.boilerplate.clone(),
            templates: stats.templates.clone(),
        }
    }
}

/// The whole page for `data`.
pub fn build_html(data: &ReportData<'_>, options: &ReportOptions) -> String {
    let sample = sample::sample(data.assignment, options.max_clusters, options.max_members);
    let mut page = String::with_capacity(64 << 10);
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{CONTENT_SECURITY_POLICY}\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>neardup report</title>\n<style>\n{STYLE}</style></head>\n<body>\n\
         <header><h1>neardup report</h1>"
    );
    if !data.inputs.is_empty() {
        page.push_str(r#"<p class="muted">Inputs: "#);
        push_escaped(&mut page, &data.inputs.join(", "));
        page.push_str("</p>");
    }
    page.push_str("</header>\n");
    push_summary(&mut page, data, &sample);
    push_charts(&mut page, data, &sample);
    push_browser(&mut page, data, &sample, options);
    let _ = write!(
        page,
        "<footer>Written by neardup {}.</footer>\n<script>\n{SCRIPT}</script>\n</body></html>\n",
        env!("CARGO_PKG_VERSION")
    );
    page
}

/// The summary numbers and the facts of the run.
fn push_summary(page: &mut String, data: &ReportData<'_>, sample: &Sample) {
    let documents = data.assignment.duplicate_of.len() as u64;
    let removed = data.assignment.duplicate_of.iter().flatten().count() as u64;
    page.push_str("<section id=\"summary\"><h2>Summary</h2>\n<dl class=\"numbers\">");
    let mut number = |label: &str, value: String| {
        let _ = write!(page, "<div><dt>{label}</dt><dd>{value}</dd></div>");
    };
    number("Documents", thousands(documents));
    number("Kept", thousands(documents - removed));
    let share = if documents == 0 {
        0.0
    } else {
        100.0 * removed as f64 / documents as f64
    };
    number("Removed", format!("{} ({share:.1}%)", thousands(removed)));
    number("Duplicate clusters", thousands(sample.clusters()));
    number("Largest cluster", thousands(sample.largest_size()));
    if let Some(skipped) = data.stats.and_then(|stats| stats.skipped) {
        number("Skipped records", thousands(skipped));
    }
    page.push_str("</dl>\n");
    match data.stats {
        Some(stats) => push_facts(page, stats),
        None => page.push_str(
            "<p class=\"note\">No statistics file was given (<code>--stats</code>): the numbers \
             come from the clusters file; the method, its parameters and the timings are \
             unknown.</p>",
        ),
    }
    page.push_str("</section>\n");
}

/// Method, parameters, timings and memory from the statistics.
fn push_facts(page: &mut String, stats: &PageStats) {
    page.push_str(r#"<ul class="facts">"#);
    let mut method = stats.method.clone().unwrap_or_else(|| "unknown".to_owned());
    if let Some(threshold) = stats.threshold {
        let _ = write!(method, ", threshold {threshold}");
    }
    if let Some(measure) = &stats.measure {
        let _ = write!(method, " ({measure})");
    }
    if let Some(lsh) = stats.lsh {
        let _ = write!(method, ", LSH {} bands x {} rows", lsh.bands, lsh.rows);
    }
    push_fact(page, "Method", &method);
    if !stats.seconds.is_empty() {
        let stages: Vec<String> = stats
            .seconds
            .iter()
            .map(|(stage, seconds)| format!("{stage} {seconds:.2} s"))
            .collect();
        push_fact(page, "Time", &stages.join(", "));
    }
    if let Some(bytes) = stats.peak_rss_bytes {
        push_fact(
            page,
            "Peak memory",
            &format!("{:.1} MiB", bytes as f64 / 1048576.0),
        );
    }
    page.push_str("</ul>\n");
    if let Some(found) = &stats.boilerplate {
        push_boilerplate(page, found);
    }
    if let Some(found) = &stats.templates {
        push_templates(page, found);
    }
}

/// The templates found: per template its documents, the pairs refused, the fixed text with
/// its slots marked, and the slots of its first documents.
fn push_templates(page: &mut String, found: &neardup_pipeline::stats::TemplatesReport) {
    page.push_str("<h3>Templates</h3>\n<ul class=\"facts\">");
    push_fact(
        page,
        "Templates",
        &format!(
            "{} found in {} documents; {} candidate pairs refused as two fillings of one \
             template (the measure reached the threshold, the rare elements or the numbers \
             differ)",
            thousands(found.found),
            thousands(found.documents),
            thousands(found.refused_pairs)
        ),
    );
    page.push_str("</ul>\n");
    for template in &found.top {
        let _ = write!(
            page,
            "<details class=\"template\"><summary>{} documents, {} pairs refused: <code>",
            thousands(template.documents),
            thousands(template.refused_pairs)
        );
        let fixed = template.fixed.as_deref();
        push_escaped(
            page,
            fixed.unwrap_or("(the inputs could not be read again)"),
        );
        page.push_str("</code></summary><table class=\"boilerplate\"><tbody>");
        for (index, id) in template.ids.iter().enumerate() {
            page.push_str("<tr><td>");
            push_escaped(page, &id_text(id));
            page.push_str("</td><td>");
            let slots = template.slots.get(index).map_or(&[][..], Vec::as_slice);
            push_escaped(page, &slots.join(" | "));
            page.push_str("</td></tr>");
        }
        page.push_str("</tbody></table></details>\n");
    }
}

/// The boilerplate lines found and the shingles discounted.
fn push_boilerplate(page: &mut String, found: &neardup_pipeline::stats::BoilerplateReport) {
    page.push_str("<h3>Boilerplate</h3>\n<ul class=\"facts\">");
    let limit = |value: Option<u64>| value.map_or("off".to_owned(), |n| format!("{n} documents"));
    push_fact(
        page,
        "Boilerplate lines",
        &format!(
            "{} distinct, removed {} times from {} documents (a line in at least {} is \
             boilerplate)",
            thousands(found.distinct_lines),
            thousands(found.removed_lines),
            thousands(found.documents),
            limit(found.boilerplate_df)
        ),
    );
    push_fact(
        page,
        "Common shingles",
        &format!(
            "{} discounted (a shingle in more than {} is common)",
            thousands(found.discounted_shingles),
            limit(found.max_df)
        ),
    );
    if let Some(table) = &found.table {
        let bytes = found.table_bytes.unwrap_or(0) as f64 / 1048576.0;
        push_fact(
            page,
            "Corpus statistics",
            &format!(
                "{} distinct documents counted, {table} table of {bytes:.1} MiB",
                thousands(found.counted_documents)
            ),
        );
    }
    page.push_str("</ul>\n");
    if found.top_lines.is_empty() {
        return;
    }
    page.push_str(
        "<table class=\"boilerplate\"><thead><tr><th>documents</th><th>most frequent \
         boilerplate lines</th></tr></thead><tbody>",
    );
    for line in &found.top_lines {
        let _ = write!(page, "<tr><td>{}</td><td>", thousands(line.documents));
        push_escaped(page, &line.text);
        page.push_str("</td></tr>");
    }
    page.push_str("</tbody></table>\n");
}

fn push_fact(page: &mut String, name: &str, value: &str) {
    let _ = write!(page, "<li>{name}: ");
    push_escaped(page, value);
    page.push_str("</li>");
}

/// The cluster-size histogram, the similarity histogram and the S-curve.
fn push_charts(page: &mut String, data: &ReportData<'_>, sample: &Sample) {
    page.push_str("<section id=\"charts\"><h2>Distributions</h2><div class=\"charts\">\n");
    let sizes = chart::size_buckets(sample.size_counts.iter().map(|(&s, &c)| (s, c)));
    let size_chart = BarChart {
        title: "Clusters by size".to_owned(),
        x_title: "documents in the cluster".to_owned(),
        y_title: "clusters (log scale)".to_owned(),
        scale: Scale::Log,
        marker: None,
    };
    push_figure(
        page,
        "Cluster sizes",
        &chart::bar_chart(&size_chart, &sizes),
    );
    let threshold = data.stats.and_then(|stats| stats.threshold);
    let similarities = data
        .assignment
        .duplicate_of
        .iter()
        .zip(data.assignment.similarity.iter())
        .filter_map(|(duplicate_of, similarity)| duplicate_of.and(similarity));
    let bins = chart::similarity_bins(similarities);
    let similarity_chart = BarChart {
        title: "Duplicates by similarity to their representative".to_owned(),
        x_title: "similarity".to_owned(),
        y_title: "duplicates".to_owned(),
        scale: Scale::Linear,
        marker: threshold.map(|threshold| Marker {
            position: threshold,
            label: format!("threshold {threshold:.2}"),
        }),
    };
    let svg = chart::bar_chart(&similarity_chart, &chart::similarity_bars(&bins));
    push_figure(page, "Similarity of duplicates", &svg);
    push_figure(page, "LSH S-curve", &s_curve_or_note(data.stats));
    page.push_str("</div></section>\n");
}

/// The S-curve, or why there is none.
fn s_curve_or_note(stats: Option<&PageStats>) -> String {
    let Some(stats) = stats else {
        return "<p class=\"note\">No statistics file was given (<code>--stats</code>), so the \
                LSH bands and rows are unknown and the S-curve is not drawn.</p>"
            .to_owned();
    };
    let Some(lsh) = stats.lsh else {
        let method = escape_or(stats.method.as_deref(), "this");
        return format!(
            "<p class=\"note\">The {method} method does not use LSH bands: there is no \
             S-curve.</p>"
        );
    };
    let mut figure = chart::s_curve_chart(lsh, stats.threshold);
    let _ = write!(
        figure,
        "<p class=\"note\">Probability that two documents of Jaccard similarity s share at least \
         one of {} bands of {} rows: 1 - (1 - s<sup>{}</sup>)<sup>{}</sup>.",
        lsh.bands, lsh.rows, lsh.rows, lsh.bands
    );
    if let Some(measure) = stats.measure.as_deref().filter(|m| *m != "jaccard") {
        figure.push_str(" The threshold is of the ");
        push_escaped(&mut figure, measure);
        figure.push_str(" measure.");
    }
    figure.push_str("</p>");
    figure
}

fn push_figure(page: &mut String, caption: &str, content: &str) {
    let _ = writeln!(
        page,
        "<figure><figcaption>{caption}</figcaption>{content}</figure>"
    );
}

/// The two cluster lists behind tabs.
fn push_browser(
    page: &mut String,
    data: &ReportData<'_>,
    sample: &Sample,
    options: &ReportOptions,
) {
    page.push_str("<section id=\"clusters\"><h2>Clusters</h2>\n");
    if sample.largest.is_empty() {
        page.push_str(
            "<p class=\"note\">No duplicates were found: there is no cluster to show.</p>\
             </section>\n",
        );
        return;
    }
    let _ = writeln!(
        page,
        "<nav class=\"tabs\"><button type=\"button\" data-tab=\"largest\">Largest ({})</button>\
         <button type=\"button\" data-tab=\"borderline\">Borderline ({})</button></nav>",
        sample.largest.len(),
        sample.borderline.len()
    );
    let _ = writeln!(
        page,
        "<div class=\"panel\" id=\"largest\"><h3>Largest clusters</h3><p class=\"note\">The {} \
         largest of {} clusters, each with up to {} duplicates, the least similar first.</p>",
        sample.largest.len(),
        thousands(sample.clusters()),
        options.max_members
    );
    browser::push_clusters(page, data, &sample.largest, options);
    let threshold = match data.stats.and_then(|stats| stats.threshold) {
        Some(threshold) => format!("closest to the threshold ({threshold})"),
        None => "the lowest (the threshold is unknown without --stats)".to_owned(),
    };
    let _ = write!(
        page,
        "</div>\n<div class=\"panel\" id=\"borderline\"><h3>Borderline clusters</h3><p \
         class=\"note\">The {} clusters whose least similar duplicate is {threshold}: the \
         decisions most worth checking.</p>\n",
        sample.borderline.len(),
    );
    browser::push_clusters(page, data, &sample.borderline, options);
    page.push_str("</div></section>\n");
}

/// `text` escaped, or `fallback` when absent.
fn escape_or(text: Option<&str>, fallback: &str) -> String {
    diff::escape_html(text.unwrap_or(fallback))
}

/// How an id is shown: a string as it is, a number as written.
fn id_text(id: &Value) -> String {
    match id {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// `1234567` as `1,234,567`.
fn thousands(number: u64) -> String {
    let digits = number.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Documents 0..5: 1 and 2 duplicate 0; 4 duplicates 3.
    struct Fixture {
        ids: Vec<Value>,
        texts: Vec<String>,
        assignment: Assignment,
    }

    impl Fixture {
        fn new(texts: [&str; 5]) -> Fixture {
            Fixture {
                ids: vec![json!("a"), json!(2), json!("<b>&"), json!(4), json!(5)],
                texts: texts.iter().map(|t| t.to_string()).collect(),
                assignment: Assignment {
                    duplicate_of: vec![None, Some(0), Some(0), None, Some(3)],
                    similarity: vec![None, Some(0.9), Some(0.75), None, Some(0.8)].into(),
                },
            }
        }

        fn html(&self, stats: Option<&PageStats>, options: &ReportOptions) -> String {
            let documents: Vec<Document> = self
                .ids
                .iter()
                .zip(&self.texts)
                .map(|(id, text)| Document { id, text })
                .collect();
            let inputs = ["in.jsonl".to_owned()];
            let data = ReportData {
                inputs: &inputs,
                documents: &documents,
                assignment: &self.assignment,
                stats,
            };
            build_html(&data, options)
        }
    }

    fn plain() -> Fixture {
        Fixture::new([
            "the quick brown fox jumps",
            "the quick red fox jumps",
            "the quick brown fox jumps",
            "今天北京天气晴朗",
            "今天上海天气晴朗",
        ])
    }

    fn page_stats(value: Value) -> PageStats {
        PageStats::from_stats(&RunStats::from_json(value).unwrap())
    }

    fn stats() -> PageStats {
        page_stats(json!({
            "skipped": 0,
            "seconds": {"read": 0.5, "total": 1.25},
            "peak_rss_bytes": 10485760,
            "method": {"name": "minhash", "threshold": 0.7,
                       "params": {"bands": 9, "rows": 13, "measure": "jaccard"}},
        }))
    }

    /// The values of every `src=` and `href=` attribute of `html`.
    fn links(html: &str) -> Vec<&str> {
        ["src=\"", "href=\"", "src='", "href='"]
            .iter()
            .flat_map(|attribute| {
                html.match_indices(attribute)
                    .map(|(i, a)| &html[i + a.len()..])
            })
            .map(|rest| rest.split(['"', '\'']).next().unwrap_or_default())
            .collect()
    }

    #[test]
    fn stats_are_read_leniently() {
        let stats = stats();
        assert_eq!(stats.lsh, Some(LshParams { bands: 9, rows: 13 }));
        assert_eq!(stats.threshold, Some(0.7));
        assert_eq!(
            stats.seconds,
            [("read".to_owned(), 0.5), ("total".to_owned(), 1.25)]
        );
        let exact = page_stats(json!({"method": {"name": "exact", "params": {}}}));
        assert_eq!(exact.lsh, None);
        let empty = page_stats(json!({}));
        assert_eq!((empty.method, empty.threshold), (None, None));
        assert!(RunStats::from_json(json!([1, 2])).is_err());
    }

    #[test]
    fn boilerplate_lines_are_shown_escaped() {
        let stats = page_stats(json!({
            "method": {"name": "minhash", "threshold": 0.4, "params": {}},
            "boilerplate": {"table": "exact", "table_bytes": 1048576, "counted_documents": 90,
                            "max_df": 50, "boilerplate_df": 20, "documents": 80,
                            "removed_lines": 160, "distinct_lines": 2,
                            "discounted_shingles": 1234,
                            "top_lines": [{"text": "<b>Copyright</b> 2024", "documents": 80}]},
        }));
        let mut page = String::new();
        push_facts(&mut page, &stats);
        assert!(page.contains("&lt;b&gt;Copyright&lt;/b&gt; 2024"), "{page}");
        assert!(
            page.contains("removed 160 times from 80 documents"),
            "{page}"
        );
        assert!(page.contains("1,234 discounted"), "{page}");
        assert!(!page.contains("<b>Copyright"), "{page}");
        let mut without = String::new();
        push_facts(&mut without, &self::stats());
        assert!(!without.contains("Boilerplate"));
    }

    #[test]
    fn templates_are_shown_with_their_slots_escaped() {
        let stats = page_stats(json!({
            "method": {"name": "minhash", "threshold": 0.4, "params": {}},
            "templates": {"refused_pairs": 1200, "found": 3, "documents": 2400,
                          "top": [{"documents": 1500, "refused_pairs": 900,
                                   "ids": ["n1", 7],
                                   "fixed": "【{}】您的验证码是{}<b>",
                                   "slots": [["淘宝", "482105"], ["京东", "913377"]]}]},
        }));
        let mut page = String::new();
        push_facts(&mut page, &stats);
        assert!(
            page.contains("3 found in 2,400 documents; 1,200 candidate pairs"),
            "{page}"
        );
        assert!(
            page.contains("1,500 documents, 900 pairs refused"),
            "{page}"
        );
        assert!(page.contains("【{}】您的验证码是{}&lt;b&gt;"), "{page}");
        assert!(page.contains("<td>n1</td><td>淘宝 | 482105</td>"), "{page}");
        assert!(page.contains("<td>7</td><td>京东 | 913377</td>"), "{page}");
        let mut without = String::new();
        push_facts(&mut without, &self::stats());
        assert!(!without.contains("Templates"));
    }

    #[test]
    fn text_and_ids_are_escaped() {
        let fixture = Fixture::new([
            "<script>alert(1)</script> & more",
            "<script>alert(1)</script> & less",
            "x",
            "y",
            "y",
        ]);
        let html = fixture.html(None, &ReportOptions::default());
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; "));
        assert!(html.contains("<code>&lt;b&gt;&amp;</code>"));
        assert_eq!(
            html.matches("<script>").count(),
            1,
            "only the page's own script"
        );
        assert!(!html.contains("<b>&"));
    }

    #[test]
    fn page_has_summary_charts_and_highlighted_diffs() {
        let html = plain().html(Some(&stats()), &ReportOptions::default());
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("<h2>Summary</h2>"));
        assert!(html.contains("<dt>Removed</dt><dd>3 (60.0%)</dd>"));
        assert!(html.contains("<dt>Duplicate clusters</dt><dd>2</dd>"));
        assert!(html.contains("LSH 9 bands x 13 rows"));
        assert_eq!(html.matches("<svg").count(), 3);
        assert_eq!(html.matches("<polyline").count(), 1);
        assert!(html.contains("<del>brown</del>") && html.contains("<ins>red</ins>"));
        assert!(html.contains("<del>北京</del>") && html.contains("<ins>上海</ins>"));
        assert!(html.contains("identical text"));
    }

    #[test]
    fn page_loads_nothing_from_outside() {
        let html = plain().html(Some(&stats()), &ReportOptions::default());
        assert!(
            links(&html).iter().all(|link| link.starts_with('#')),
            "{:?}",
            links(&html)
        );
        assert!(!html.contains("http://") && !html.contains("https://"));
        assert!(html.contains("Content-Security-Policy"));
    }

    #[test]
    fn without_stats_the_s_curve_is_explained_not_drawn() {
        let html = plain().html(None, &ReportOptions::default());
        assert_eq!(html.matches("<svg").count(), 2);
        assert!(html.contains("the S-curve is not drawn"));
        assert!(html.contains("the threshold is unknown"));
    }

    #[test]
    fn long_texts_are_cut_with_a_note() {
        let long = "word ".repeat(100);
        let fixture = Fixture::new([&long, &long, "a", "b", "b"]);
        let options = ReportOptions {
            max_chars: 20,
            ..ReportOptions::default()
        };
        let html = fixture.html(None, &options);
        assert!(html.contains("Truncated: the first 20 of 500 characters are shown."));
        assert!(!html.contains(&"word ".repeat(5)));
    }

    #[test]
    fn members_beyond_the_limit_are_counted() {
        let options = ReportOptions {
            max_members: 1,
            ..ReportOptions::default()
        };
        let html = plain().html(None, &options);
        assert!(html.contains("1 more duplicates not shown"));
    }

    #[test]
    fn no_duplicates_gives_a_page_without_browser() {
        let mut fixture = plain();
        fixture.assignment = Assignment::all_kept(5);
        let html = fixture.html(None, &ReportOptions::default());
        assert!(html.contains("No duplicates were found"));
        assert!(!html.contains("data-tab=\""));
    }

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }
}
