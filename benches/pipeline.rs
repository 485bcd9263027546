//! The optimization pipeline (`-O2`, then closure elimination as the native back ends run
//! it) on three programs, per pass, and one table each.
//!
//! - `stencils`: `tests/lang/ok/stencils.art`, the largest example (an image-filter library
//!   used three ways);
//! - `unroll5`: five nested `unroll(0, 8)` loops around one statement (32,768 copies of
//!   it after partial evaluation), the blow-up test;
//! - `church`: `tests/lang/ok/church.art`, Church numerals, where closures survive and
//!   `closure-conv` has work to do.
//!
//! For each, the median of 5 runs of every pass, the IR size after it, and the total; the
//! anchor, measured in the same run, is the frontend (parse, check and lower) on the same
//! program. Run: `cargo bench --bench pipeline`.

use durin_frontend::compile;
use durin_passes::{Pipeline, RunOptions};
use std::time::Instant;

fn unroll5() -> String {
    let mut s = String::from("#[export]\nfn nest(a: &mut [i32]) -> () {\n");
    for d in 0..5 {
        s.push_str(&format!(
            "{}for i{d} in unroll(0, 8) {{\n",
            "    ".repeat(d + 1)
        ));
    }
    s.push_str(&format!(
        "{}a(i0 + i1 + i2 + i3 + i4) += i0 * i1 + i2 * i3 + i4;\n",
        "    ".repeat(6)
    ));
    for d in (0..5).rev() {
        s.push_str(&format!("{}}}\n", "    ".repeat(d + 1)));
    }
    s.push_str("}\n");
    s
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    xs[xs.len() / 2]
}

fn bench(name: &str, src: &str, runs: usize) {
    let files = [(format!("{name}.art"), src.to_string())];
    let pipeline = Pipeline::parse("O2,closure-conv").expect("a pipeline");
    let opts = RunOptions::default();
    let mut frontend = Vec::new();
    let mut per_pass: Vec<(&'static str, Vec<f64>, usize)> = Vec::new();
    let mut totals = Vec::new();
    let mut defs_in = 0;
    for _ in 0..runs {
        let t = Instant::now();
        let out = compile::compile(&files, true);
        frontend.push(t.elapsed().as_secs_f64());
        assert!(!out.has_errors(), "{name} compiles:\n{}", out.render());
        let mut w = out.lowered.expect("lowered").world;
        defs_in = w.num_defs();
        let t = Instant::now();
        let times = pipeline
            .run(&mut w, &opts, |_, _| {})
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        totals.push(t.elapsed().as_secs_f64());
        if per_pass.is_empty() {
            per_pass = times.iter().map(|p| (p.name, Vec::new(), 0)).collect();
        }
        for (slot, p) in per_pass.iter_mut().zip(&times) {
            slot.1.push(p.time.as_secs_f64());
            slot.2 = p.defs;
        }
    }
    let ms = |v: &[f64]| median(v.to_vec()) * 1e3;
    let anchor = ms(&frontend);
    println!();
    println!(
        "{name}: {} lines, {defs_in} defs from the frontend; median of {runs} runs",
        src.lines().count()
    );
    println!("| pass | ms | defs after |");
    println!("|---|---|---|");
    println!("| anchor: frontend | {anchor:.1} | {defs_in} |");
    for (pass, times, defs) in &per_pass {
        println!("| {pass} | {:.1} | {defs} |", ms(times));
    }
    let total = ms(&totals);
    println!(
        "| pipeline total | {total:.1} ({:.1}x the anchor) | |",
        total / anchor
    );
}

fn main() {
    let stencils = include_str!("../tests/lang/ok/stencils.art");
    bench("stencils", stencils, 5);
    bench("unroll5", &unroll5(), 5);
    bench("church", include_str!("../tests/lang/ok/church.art"), 5);
    println!();
    println!("target: unroll5's pipeline total <= 2000 ms");
}
