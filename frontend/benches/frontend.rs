//! Frontend throughput: parse, resolve, check and lower a generated program of 50,000
//! lines, and print one table.
//!
//! The program has 50,000 lines in about 4,000 exported functions (so that lowering
//! reaches all of them): integer and float arithmetic, `while` and `for` loops, `if`
//! chains, structs, closures, calls to earlier functions, and a polymorphic helper
//! instantiated at two types. The anchor, measured in the same run, is lexing alone,
//! the cheapest pass over the same text.
//!
//! Run: `cargo bench -p durin-frontend --bench frontend` (`-- --lines N` for another size).

use durin_frontend::compile;
use durin_frontend::lexer;
use durin_frontend::source::SourceMap;
use std::fmt::Write;
use std::time::Instant;

fn generate(lines: usize) -> String {
    let mut s = String::new();
    s.push_str("struct Acc { sum: i64, count: i32, scale: f64 }\n");
    s.push_str("fn @apply2[T](f: fn(T) -> T, x: T) -> T { f(f(x)) }\n");
    let mut i = 0;
    while s.lines().count() < lines {
        let prev = if i == 0 {
            "x".to_string()
        } else {
            format!("f{}(x - 1, y)", i - 1)
        };
        write!(
            s,
            "#[export]
fn f{i}(x: i32, y: f64) -> i32 {{
    let mut acc = Acc {{ sum = 0, count = 0, scale = y * {i}.5 }};
    let mut k = x % 7;
    while k < {m} {{
        acc.sum += (k * {i} + 3) as i64;
        acc.count++;
        k += 2;
    }}
    for j in range(0, 4) {{
        if j % 2 == 0 {{ acc.sum -= j as i64; }} else if j == 3 {{ acc.scale *= 0.5; }} else {{ acc.count += j; }}
    }}
    let g = |z: i32| z + acc.count;
    let h = apply2(|v: f64| v * acc.scale, 1.0);
    let w = apply2(g, {i} % 13);
    if x > 0 {{ {prev} + w + h as i32 + (acc.sum % 1000) as i32 }} else {{ w }}
}}
",
            m = 5 + i % 11
        )
        .expect("write to a string");
        i += 1;
    }
    s
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    xs[xs.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let lines = args
        .iter()
        .position(|a| a == "--lines")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(50_000);
    let src = generate(lines);
    let nlines = src.lines().count();
    let runs = 5;
    let (mut lex, mut parse, mut check, mut lower, mut total) =
        (vec![], vec![], vec![], vec![], vec![]);
    let mut defs = 0;
    for _ in 0..runs {
        let t = Instant::now();
        let mut sm = SourceMap::new();
        let id = sm.add("gen.art", &src);
        let mut d = Vec::new();
        let toks = lexer::lex(id, &src, &mut d);
        lex.push(t.elapsed().as_secs_f64());
        assert!(toks.len() > nlines, "lexed");
        let t = Instant::now();
        let out = compile::compile(&[("gen.art".to_string(), src.clone())], true);
        total.push(t.elapsed().as_secs_f64());
        assert!(
            !out.has_errors(),
            "the generated program is valid:\n{}",
            out.render()
        );
        parse.push(out.timings.parse);
        check.push(out.timings.check);
        lower.push(out.timings.lower);
        defs = out.lowered.as_ref().map_or(0, |l| l.world.num_defs());
    }
    let ms = |v: &Vec<f64>| median(v.clone()) * 1e3;
    println!("frontend on a generated program: {nlines} lines, {} bytes, {defs} IR defs; median of {runs} runs", src.len());
    println!("| stage | ms |");
    println!("|---|---|");
    println!("| anchor: lex only | {:.1} |", ms(&lex));
    println!("| lex + parse (with prelude) | {:.1} |", ms(&parse));
    println!("| resolve + check | {:.1} |", ms(&check));
    println!("| lower to IR | {:.1} |", ms(&lower));
    println!(
        "| total | {:.1} (target <= 1000; {:.1}x the anchor) |",
        ms(&total),
        ms(&total) / ms(&lex)
    );
}
