//! The charts of the report, drawn as inline SVG: no script, no library, nothing to load.
//!
//! Colours and fonts come from the page's style sheet through the classes `axis`, `bar`,
//! `curve` and `marker`, so that an SVG is only geometry and stays small.

use std::fmt::Write;

use neardup_core::lsh::LshParams;

use super::diff::push_escaped;
use super::thousands;

/// How many bins the similarity histogram has over `[0, 1]`.
pub const SIMILARITY_BINS: usize = 20;

/// Width of every chart, in SVG units.
const WIDTH: f64 = 560.0;
/// Height of every chart, in SVG units.
const HEIGHT: f64 = 260.0;
/// Space left of the plot for the y-axis labels.
const LEFT: f64 = 60.0;
/// Space right of the plot.
const RIGHT: f64 = 16.0;
/// Space above the plot.
const TOP: f64 = 20.0;
/// Space below the plot for the x-axis labels and title.
const BOTTOM: f64 = 44.0;
/// Bars with a count written above them, at most; more would overlap.
const LABELLED_BARS: usize = 12;
/// Points of the S-curve polyline.
const CURVE_STEPS: usize = 100;

/// One bar of a bar chart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bar {
    /// Written under the bar.
    pub label: String,
    /// Shown when the pointer rests on the bar.
    pub tooltip: String,
    /// The bar's height.
    pub count: u64,
}

/// How bar heights grow with their counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Height proportional to the count.
    Linear,
    /// Height proportional to `ln(1 + count)`: a few large clusters stay visible beside many
    /// small ones.
    Log,
}

/// A vertical line across a chart, such as the threshold.
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    /// Where, as a fraction of the x axis.
    pub position: f64,
    /// Written beside the line.
    pub label: String,
}

/// The titles and options of a bar chart.
#[derive(Debug, Clone, PartialEq)]
pub struct BarChart {
    /// The chart's accessible name.
    pub title: String,
    /// Under the x axis.
    pub x_title: String,
    /// Beside the y axis.
    pub y_title: String,
    /// Linear or logarithmic heights.
    pub scale: Scale,
    /// An optional vertical line.
    pub marker: Option<Marker>,
}

/// The counts of `similarities` in [`SIMILARITY_BINS`] equal bins over `[0, 1]`; bin `i` holds
/// `[i / 20, (i + 1) / 20)`, the last one also 1. Values outside `[0, 1]` count in the nearest
/// bin; NaN is not counted.
pub fn similarity_bins(similarities: impl IntoIterator<Item = f64>) -> [u64; SIMILARITY_BINS] {
    let mut bins = [0; SIMILARITY_BINS];
    for similarity in similarities.into_iter().filter(|s| !s.is_nan()) {
        let bin = (similarity.clamp(0.0, 1.0) * SIMILARITY_BINS as f64) as usize;
        bins[bin.min(SIMILARITY_BINS - 1)] += 1;
    }
    bins
}

/// The bars of the similarity histogram, labelled by their lower edge.
pub fn similarity_bars(bins: &[u64; SIMILARITY_BINS]) -> Vec<Bar> {
    let width = 1.0 / SIMILARITY_BINS as f64;
    let bars = bins.iter().enumerate().map(|(index, &count)| {
        let low = index as f64 * width;
        Bar {
            label: format!("{low:.2}"),
            tooltip: format!("{low:.2} to {:.2}: {}", low + width, thousands(count)),
            count,
        }
    });
    bars.collect()
}

/// Cluster sizes of 2 and more, grouped in powers of two (`2`, `3-4`, `5-8`, ...), from
/// `(size, clusters of that size)`; every bucket up to the largest size is present.
pub fn size_buckets(sizes: impl IntoIterator<Item = (u64, u64)>) -> Vec<Bar> {
    let mut counts: Vec<u64> = Vec::new();
    for (size, count) in sizes.into_iter().filter(|&(size, _)| size >= 2) {
        // Bucket k holds sizes in (2^(k-1), 2^k]; size 2 is bucket 1, stored at index 0.
        let bucket = (u64::BITS - (size - 1).leading_zeros()) as usize;
        if counts.len() < bucket {
            counts.resize(bucket, 0);
        }
        counts[bucket - 1] += count;
    }
    let bars = counts.into_iter().enumerate().map(|(index, count)| {
        let high = 1u64 << (index + 1);
        let low = high / 2 + 1;
        let label = if low == high {
            high.to_string()
        } else {
            format!("{low}-{high}")
        };
        let tooltip = format!("size {label}: {} clusters", thousands(count));
        Bar {
            label,
            tooltip,
            count,
        }
    });
    bars.collect()
}

/// The S-curve `1 - (1 - s^rows)^bands` at `steps + 1` evenly spaced similarities from 0 to 1.
pub fn s_curve_points(params: LshParams, steps: usize) -> Vec<(f64, f64)> {
    let steps = steps.max(1);
    (0..=steps)
        .map(|step| {
            let similarity = step as f64 / steps as f64;
            (similarity, params.candidate_probability(similarity))
        })
        .collect()
}

/// The bar chart of `bars` as an `<svg>` element.
pub fn bar_chart(chart: &BarChart, bars: &[Bar]) -> String {
    let mut svg = open_svg(&chart.title);
    let max = bars.iter().map(|bar| bar.count).max().unwrap_or(0);
    let height_of = |count: u64| match chart.scale {
        _ if max == 0 => 0.0,
        Scale::Linear => count as f64 / max as f64,
        Scale::Log => (count as f64).ln_1p() / (max as f64).ln_1p(),
    };
    let ticks: Vec<(f64, String)> = y_tick_values(max, chart.scale)
        .into_iter()
        .map(|value| (height_of(value), thousands(value)))
        .collect();
    y_ticks(&mut svg, &ticks);
    let slot = plot_width() / bars.len().max(1) as f64;
    let label_every = bars.len().div_ceil(LABELLED_BARS).max(1);
    for (index, bar) in bars.iter().enumerate() {
        let x = LEFT + index as f64 * slot;
        let height = height_of(bar.count) * plot_height();
        let top = TOP + plot_height() - height;
        let _ = write!(
            svg,
            r#"<rect class="bar" x="{:.1}" y="{top:.1}" width="{:.1}" height="{height:.1}">"#,
            x + slot * 0.1,
            slot * 0.8
        );
        svg.push_str("<title>");
        push_escaped(&mut svg, &bar.tooltip);
        svg.push_str("</title></rect>");
        let centre = x + slot / 2.0;
        if bars.len() <= LABELLED_BARS && bar.count > 0 {
            text(&mut svg, centre, top - 4.0, "middle", &thousands(bar.count));
        }
        if index % label_every == 0 {
            text(
                &mut svg,
                centre,
                TOP + plot_height() + 14.0,
                "middle",
                &bar.label,
            );
        }
    }
    if let Some(marker) = &chart.marker {
        vertical_marker(&mut svg, marker);
    }
    axes(&mut svg, &chart.x_title, &chart.y_title);
    svg.push_str("</svg>");
    svg
}

/// The S-curve of `params` as an `<svg>` element, with `threshold` marked.
pub fn s_curve_chart(params: LshParams, threshold: Option<f64>) -> String {
    let title = format!(
        "Probability of becoming a candidate pair, {} bands x {} rows",
        params.bands, params.rows
    );
    let mut svg = open_svg(&title);
    let ticks = [0.0, 0.5, 1.0].map(|value| (value, value.to_string()));
    y_ticks(&mut svg, &ticks);
    for step in 0..=4 {
        let similarity = step as f64 / 4.0;
        let x = LEFT + similarity * plot_width();
        let label = format!("{similarity:.2}");
        text(&mut svg, x, TOP + plot_height() + 14.0, "middle", &label);
    }
    svg.push_str(r#"<polyline class="curve" points=""#);
    for (similarity, probability) in s_curve_points(params, CURVE_STEPS) {
        let x = LEFT + similarity * plot_width();
        let y = TOP + (1.0 - probability) * plot_height();
        let _ = write!(svg, "{x:.1},{y:.1} ");
    }
    svg.push_str(r#""/>"#);
    if let Some(threshold) = threshold {
        let probability = params.candidate_probability(threshold);
        let label = format!("threshold {threshold:.2} (P = {probability:.3})");
        vertical_marker(
            &mut svg,
            &Marker {
                position: threshold,
                label,
            },
        );
    }
    axes(&mut svg, "similarity", "P(candidate)");
    svg.push_str("</svg>");
    svg
}

fn plot_width() -> f64 {
    WIDTH - LEFT - RIGHT
}

fn plot_height() -> f64 {
    HEIGHT - TOP - BOTTOM
}

fn open_svg(title: &str) -> String {
    let mut svg =
        format!(r#"<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label=""#);
    push_escaped(&mut svg, title);
    svg.push_str(r#"">"#);
    svg
}

/// A `<text>` element at `(x, y)`.
fn text(svg: &mut String, x: f64, y: f64, anchor: &str, content: &str) {
    let _ = write!(
        svg,
        r#"<text x="{x:.1}" y="{y:.1}" text-anchor="{anchor}">"#
    );
    push_escaped(svg, content);
    svg.push_str("</text>");
}

/// The counts at which the y axis is labelled.
fn y_tick_values(max: u64, scale: Scale) -> Vec<u64> {
    let mut ticks = vec![0];
    match scale {
        Scale::Linear if max >= 2 => ticks.push(max / 2),
        Scale::Log => {
            let mut power = 1;
            while power < max {
                ticks.push(power);
                power = power.saturating_mul(10);
            }
        }
        Scale::Linear => {}
    }
    if max > 0 {
        ticks.push(max);
    }
    ticks
}

/// Labelled grid lines, each at a fraction of the plot height.
fn y_ticks(svg: &mut String, ticks: &[(f64, String)]) {
    for (fraction, label) in ticks {
        let y = TOP + (1.0 - fraction) * plot_height();
        let _ = write!(
            svg,
            r#"<line class="grid" x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}"/>"#,
            WIDTH - RIGHT
        );
        text(svg, LEFT - 6.0, y + 4.0, "end", label);
    }
}

fn vertical_marker(svg: &mut String, marker: &Marker) {
    let x = LEFT + marker.position.clamp(0.0, 1.0) * plot_width();
    let _ = write!(
        svg,
        r#"<line class="marker" x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}"/>"#,
        TOP + plot_height()
    );
    // Labels near the right edge are written leftwards so that they stay inside the chart.
    let (offset, anchor) = if marker.position > 0.6 {
        (-4.0, "end")
    } else {
        (4.0, "start")
    };
    text(svg, x + offset, TOP + 12.0, anchor, &marker.label);
}

fn axes(svg: &mut String, x_title: &str, y_title: &str) {
    let bottom = TOP + plot_height();
    let _ = write!(
        svg,
        r#"<path class="axis" d="M{LEFT} {TOP}V{bottom}H{:.1}"/>"#,
        WIDTH - RIGHT
    );
    text(
        svg,
        LEFT + plot_width() / 2.0,
        HEIGHT - 6.0,
        "middle",
        x_title,
    );
    let _ = write!(
        svg,
        r#"<text x="0" y="0" text-anchor="middle" transform="translate(14 {:.1}) rotate(-90)">"#,
        TOP + plot_height() / 2.0
    );
    push_escaped(svg, y_title);
    svg.push_str("</text>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn similarity_bins_are_twenty_half_open_intervals() {
        let bins = similarity_bins([0.0, 0.049, 0.05, 0.5, 0.7, 0.74, 0.75, 0.999, 1.0]);
        assert_eq!(bins[0], 2);
        assert_eq!(bins[1], 1);
        assert_eq!(bins[10], 1);
        assert_eq!(bins[14], 2);
        assert_eq!(bins[15], 1);
        assert_eq!(bins[19], 2, "1.0 belongs to the last bin");
        assert_eq!(bins.iter().sum::<u64>(), 9);
    }

    #[test]
    fn similarity_bins_clamp_and_skip_nan() {
        let bins = similarity_bins([-0.5, 1.5, f64::NAN]);
        assert_eq!((bins[0], bins[19], bins.iter().sum::<u64>()), (1, 1, 2));
    }

    #[test]
    fn sizes_are_bucketed_in_powers_of_two() {
        let bars = size_buckets([(1, 100), (2, 7), (3, 2), (4, 1), (9, 1), (16, 3)]);
        let summary: Vec<(&str, u64)> = bars
            .iter()
            .map(|bar| (bar.label.as_str(), bar.count))
            .collect();
        assert_eq!(summary, [("2", 7), ("3-4", 3), ("5-8", 0), ("9-16", 4)]);
        assert!(size_buckets([(1, 5)]).is_empty());
    }

    #[test]
    fn s_curve_points_follow_the_formula() {
        let params = LshParams { bands: 4, rows: 2 };
        let points = s_curve_points(params, 4);
        assert_eq!(points.len(), 5);
        assert_eq!(points[0], (0.0, 0.0));
        assert_eq!(points[4], (1.0, 1.0));
        let expected = 1.0 - (1.0 - 0.5f64.powi(2)).powi(4);
        assert!((points[2].1 - expected).abs() < 1e-12);
        assert!(points.windows(2).all(|pair| pair[0].1 <= pair[1].1));
    }

    #[test]
    fn s_curve_chart_marks_the_threshold() {
        let svg = s_curve_chart(LshParams { bands: 9, rows: 13 }, Some(0.8));
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert_eq!(svg.matches("<polyline").count(), 1);
        assert!(svg.contains(r#"class="marker""#));
        assert!(svg.contains("threshold 0.80"));
        // The marker sits at 0.8 of the plot's width.
        let x = LEFT + 0.8 * plot_width();
        assert!(svg.contains(&format!(r#"x1="{x:.1}""#)));
    }

    #[test]
    fn bar_chart_has_one_rectangle_per_bar_and_escapes_labels() {
        let bars: Vec<Bar> = (0..3)
            .map(|i| Bar {
                label: format!("<{i}>"),
                tooltip: "a & b".to_owned(),
                count: i,
            })
            .collect();
        let chart = BarChart {
            title: "t".to_owned(),
            x_title: "x".to_owned(),
            y_title: "y".to_owned(),
            scale: Scale::Log,
            marker: None,
        };
        let svg = bar_chart(&chart, &bars);
        assert_eq!(svg.matches("<rect").count(), 3);
        assert!(svg.contains("&lt;2&gt;") && svg.contains("a &amp; b"));
        assert!(!svg.contains("<2>"));
    }

    #[test]
    fn empty_bar_chart_is_still_an_svg() {
        let chart = BarChart {
            title: "t".to_owned(),
            x_title: "x".to_owned(),
            y_title: "y".to_owned(),
            scale: Scale::Linear,
            marker: None,
        };
        let svg = bar_chart(&chart, &[]);
        assert!(svg.starts_with("<svg") && !svg.contains("NaN"));
    }
}
