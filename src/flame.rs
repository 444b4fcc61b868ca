//! Flamegraphs of folded stacks (`frame;frame;... weight` per line), drawn with `inferno`:
//! one profile's, or the difference between two (a run's against its base's). A leaf module:
//! the sampler draws a step's flamegraph when it saves the profile, the reports draw them again
//! (and the differential ones) from the saved stacks.

use std::io::BufReader;

/// A flamegraph of folded stacks (`differential`: lines with two counts, before and after).
pub fn flamegraph_svg(folded: &str, title: &str, differential: bool) -> Result<String, String> {
    let mut opts = inferno::flamegraph::Options::default();
    title.clone_into(&mut opts.title);
    // perf's cpu-clock samples carry their period: the counts are nanoseconds of CPU.
    opts.count_name = "ns".into();
    if differential {
        opts.subtitle = Some("red: more samples than the base, blue: fewer".into());
    }
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut opts, folded.lines(), &mut svg)
        .map_err(|e| format!("cannot draw the flamegraph: {e}"))?;
    String::from_utf8(svg).map_err(|e| format!("the flamegraph is not UTF-8: {e}"))
}

/// A differential flamegraph: the run's stacks against the base's, the base scaled to the
/// run's sample count so that colour shows a change of share, not of length.
pub fn differential_svg(
    base_folded: &str,
    run_folded: &str,
    title: &str,
) -> Result<String, String> {
    let mut lines = Vec::new();
    let opts = inferno::differential::Options {
        normalize: true,
        strip_hex: true,
    };
    inferno::differential::from_readers(
        opts,
        BufReader::new(base_folded.as_bytes()),
        BufReader::new(run_folded.as_bytes()),
        &mut lines,
    )
    .map_err(|e| format!("cannot compare the stacks: {e}"))?;
    let mut text = String::from_utf8_lossy(&lines).into_owned();
    if text.is_empty() {
        return Err("no stacks to compare".into());
    }
    if !text.ends_with('\n') {
        text.push('\n');
    }
    flamegraph_svg(&text, title, true)
}
