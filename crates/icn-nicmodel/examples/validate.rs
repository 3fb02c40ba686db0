//! Prints the validation table only (quick check while calibrating).
fn main() {
    let e = icn_nicmodel::bench::Effort {
        messages: 500,
        ..Default::default()
    };
    for c in icn_nicmodel::report::validation(e).unwrap() {
        println!(
            "{:<50} paper {:>8.3} model {:>8.3} {:+6.1}% {:?}",
            c.name,
            c.paper,
            c.model,
            100.0 * c.rel_error(),
            c.pass()
        );
    }
}
