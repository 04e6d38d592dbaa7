//! The charts, drawn with `plotters` into SVG strings (its SVG backend: text as `<text>`
//! elements in the page's `sans-serif`, no font loaded, nothing fetched). Titles and
//! legends are the page's (HTML, escaped by the template); a chart draws its axes, their
//! numbers and its marks only. Each SVG keeps its `viewBox`: the page's CSS makes it as
//! wide as its column, on a desktop or a phone.

use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;

/// Width and height of a full chart, in SVG units (scaled to the column by the CSS).
const SIZE: (u32, u32) = (600, 280);
/// A sparkline's.
const SPARK: (u32, u32) = (160, 30);
/// Axis numbers' font size (SVG units; the backend writes size / 1.24).
const LABEL_PT: f64 = 20.0;

/// One line of a step chart: a value per bin, in its colour.
pub struct Line {
    /// CSS colour, `#rrggbb`.
    pub color: RGBColor,
    /// A value per bin from the capture start.
    pub values: Vec<f64>,
    /// Drawn dashed (a second kind of mark on the same axis).
    pub dashed: bool,
}

/// One bar of a bar chart.
pub struct Bar {
    /// Its label under the axis (short: a path number, a point name cut to fit).
    pub label: String,
    /// Its height.
    pub value: f64,
    /// Its colour.
    pub color: RGBColor,
}

/// The colour of priority `p` (Okabe-Ito's palette, told apart by colour-blind readers):
/// the same in every chart and legend.
pub fn priority_color(p: u8) -> RGBColor {
    const PALETTE: [RGBColor; 8] = [
        RGBColor(0x00, 0x72, 0xb2),
        RGBColor(0xe6, 0x9f, 0x00),
        RGBColor(0x00, 0x9e, 0x73),
        RGBColor(0xcc, 0x79, 0xa7),
        RGBColor(0x56, 0xb4, 0xe9),
        RGBColor(0xd5, 0x5e, 0x00),
        RGBColor(0x66, 0x66, 0x66),
        RGBColor(0x00, 0x00, 0x00),
    ];
    PALETTE[usize::from(p) % PALETTE.len()]
}

/// Grey, for what is not a priority (802.3x PAUSE, a bar of no note).
pub const GREY: RGBColor = RGBColor(0x88, 0x88, 0x88);
/// Red, for the marks that matter (stragglers, the busiest path).
pub const RED: RGBColor = RGBColor(0xc0, 0x1c, 0x28);

/// `#rrggbb` of a colour, for the legends.
pub fn css(c: RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

/// A step chart over time: each line's value held over its bin (so one bin still draws),
/// x in seconds from the capture start, y from 0 to above the highest value. `y_unit`
/// names the y axis.
pub fn steps(lines: &[Line], bin_ns: u64, y_unit: &str) -> Result<String, String> {
    let bins = lines.iter().map(|l| l.values.len()).max().unwrap_or(0).max(1);
    let x_max = bins as f64 * bin_ns.max(1) as f64 / 1e9;
    let y_max = nice_top(lines.iter().flat_map(|l| l.values.iter().copied()).fold(0.0, f64::max));
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        let mut chart = ChartBuilder::on(&root)
            .margin(10)
            .margin_right(28)
            .x_label_area_size(34)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..x_max, 0f64..y_max)
            .map_err(|e| e.to_string())?;
        let x_fmt = |v: &f64| seconds(*v, x_max);
        let y_fmt = |v: &f64| number(*v);
        chart
            .configure_mesh()
            .disable_x_mesh()
            .max_light_lines(0)
            .bold_line_style(RGBColor(0xdd, 0xdd, 0xdd))
            .x_labels(6)
            .y_labels(5)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .y_desc(y_unit)
            .label_style(("sans-serif", LABEL_PT))
            .axis_desc_style(("sans-serif", LABEL_PT))
            .draw()
            .map_err(|e| e.to_string())?;
        let width = bin_ns.max(1) as f64 / 1e9;
        for l in lines {
            let pts = step_points(&l.values, width);
            let style = l.color.stroke_width(2);
            if l.dashed {
                chart.draw_series(DashedLineSeries::new(pts, 6, 4, style)).map_err(|e| e.to_string())?;
            } else {
                chart.draw_series(LineSeries::new(pts, style)).map_err(|e| e.to_string())?;
            }
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// A bar chart: one bar per entry, labelled under the axis; `y_unit` names the y axis.
pub fn bars(bars: &[Bar], y_unit: &str) -> Result<String, String> {
    let n = u32::try_from(bars.len()).unwrap_or(u32::MAX).max(1);
    let y_max = nice_top(bars.iter().map(|b| b.value).fold(0.0, f64::max));
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        let mut chart = ChartBuilder::on(&root)
            .margin(10)
            .margin_right(28)
            .x_label_area_size(34)
            .y_label_area_size(70)
            .build_cartesian_2d((0u32..n).into_segmented(), 0f64..y_max)
            .map_err(|e| e.to_string())?;
        let x_fmt = |v: &SegmentValue<u32>| match v {
            SegmentValue::CenterOf(i) => bars.get(*i as usize).map(|b| b.label.clone()).unwrap_or_default(),
            _ => String::new(),
        };
        let y_fmt = |v: &f64| number(*v);
        chart
            .configure_mesh()
            .disable_x_mesh()
            // Not 0: plotters' integer axes loop without end on a request for no point.
            .max_light_lines(1)
            .light_line_style(TRANSPARENT)
            .bold_line_style(RGBColor(0xdd, 0xdd, 0xdd))
            .x_labels(bars.len().clamp(1, 32))
            .y_labels(5)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .y_desc(y_unit)
            .label_style(("sans-serif", LABEL_PT))
            .axis_desc_style(("sans-serif", LABEL_PT))
            .draw()
            .map_err(|e| e.to_string())?;
        chart
            .draw_series(bars.iter().enumerate().map(|(i, b)| {
                let i = i as u32;
                let mut r = Rectangle::new(
                    [(SegmentValue::Exact(i), 0.0), (SegmentValue::Exact(i + 1), b.value)],
                    b.color.filled(),
                );
                r.set_margin(0, 0, 6, 6);
                r
            }))
            .map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// A sparkline: one series as a filled step line over `span` bins (the capture's, so that
/// the sparklines of a page share their time axis), no axis (its scale is its own highest
/// value).
pub fn sparkline(values: &[f64], span: usize, color: RGBColor) -> Result<String, String> {
    let n = values.len().max(span).max(1) as f64;
    let y_max = values.iter().copied().fold(0.0, f64::max);
    let y_max = if y_max > 0.0 { y_max } else { 1.0 };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SPARK).into_drawing_area();
        let mut chart = ChartBuilder::on(&root)
            .margin(2)
            .build_cartesian_2d(0f64..n, 0f64..y_max)
            .map_err(|e| e.to_string())?;
        let pts = step_points(values, 1.0);
        chart
            .draw_series(AreaSeries::new(pts, 0.0, color.mix(0.25)).border_style(color.stroke_width(1)))
            .map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// The corners of a step line: each value from its bin's start to its end.
fn step_points(values: &[f64], width: f64) -> Vec<(f64, f64)> {
    let mut pts = Vec::with_capacity(values.len() * 2);
    for (i, v) in values.iter().enumerate() {
        let v = if v.is_finite() { *v } else { 0.0 };
        pts.push((i as f64 * width, v));
        pts.push(((i + 1) as f64 * width, v));
    }
    pts
}

/// The top of a y axis: a little above `max`, never 0 (an axis of nothing still draws).
fn nice_top(max: f64) -> f64 {
    if max.is_finite() && max > 0.0 {
        max * 1.08
    } else {
        1.0
    }
}

/// An axis number, short: 1.5k, 2.3M, 0.05.
pub fn number(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 1e9 {
        format!("{:.1}G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A time axis number in the unit the axis' span calls for.
fn seconds(v: f64, span: f64) -> String {
    if span < 0.01 {
        format!("{:.0} µs", v * 1e6)
    } else if span < 10.0 {
        format!("{:.0} ms", v * 1e3)
    } else {
        format!("{v:.0} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_chart_is_one_svg_with_a_view_box_and_its_lines() {
        let lines = [
            Line { color: priority_color(3), values: vec![1.0, 4.0, 2.0], dashed: false },
            Line { color: GREY, values: vec![0.5], dashed: true },
        ];
        let svg = steps(&lines, 10_000_000, "Gb/s").expect("drawn");
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.trim_end().ends_with("</svg>"), "{svg}");
        assert!(svg.contains("viewBox=\"0 0 600 280\""), "{svg}");
        // The priority's colour is drawn; text is <text>, in the page's font.
        assert!(svg.contains(&css(priority_color(3)).to_uppercase()), "{svg}");
        assert!(svg.contains("<text") && svg.contains("sans-serif"));
        assert!(!svg.contains("href"), "nothing linked: {svg}");
    }

    #[test]
    fn one_bin_still_draws_a_step_and_an_empty_series_draws_axes() {
        assert_eq!(step_points(&[2.0], 0.01), vec![(0.0, 2.0), (0.01, 2.0)]);
        assert!(steps(&[], 1_000, "x").is_ok());
        assert!(bars(&[], "x").is_ok());
        assert!(sparkline(&[], 0, GREY).is_ok());
    }

    #[test]
    fn bar_labels_are_escaped_by_the_backend() {
        let b = [Bar { label: "<a&b>".into(), value: 3.0, color: RED }];
        let svg = bars(&b, "bytes").expect("drawn");
        assert!(svg.contains("&lt;a&amp;b&gt;") && !svg.contains("<a&b>"), "{svg}");
    }

    #[test]
    fn axis_numbers_are_short() {
        assert_eq!(number(0.0), "0");
        assert_eq!(number(1_500_000.0), "1.5M");
        assert_eq!(number(25_000.0), "25k");
        assert_eq!(number(0.25), "0.25");
        assert_eq!(seconds(0.005, 0.08), "5 ms");
        assert_eq!(seconds(0.0005, 0.001), "500 µs");
    }
}
