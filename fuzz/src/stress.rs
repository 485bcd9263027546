//! Generated stress programs: extreme shapes (deep nesting, long chains, many definitions,
//! huge literals and sizes) that no test file has, each at a random size.

use crate::rng::Rng;

/// The sizes shapes are generated at: from trivial to far past any limit durin sets.
const SIZES: &[usize] = &[0, 1, 2, 10, 100, 1_000, 5_000, 20_000, 100_000];

fn repeat(s: &str, n: usize) -> String {
    s.repeat(n)
}

fn joined(n: usize, f: impl Fn(usize) -> String, sep: &str) -> String {
    (0..n).map(f).collect::<Vec<_>>().join(sep)
}

fn main_returning(e: &str) -> String {
    format!("fn main() -> i32 {{\n    {e}\n}}\n")
}

/// A program of a random shape at a random size, and its description.
pub fn program(rng: &mut Rng) -> (String, String) {
    let n = *rng.pick(SIZES);
    let shape = rng.below(24);
    let (name, text) = match shape {
        0 => (
            "nested parentheses",
            main_returning(&format!("{}1{}", repeat("(", n), repeat(")", n))),
        ),
        1 => (
            "nested blocks",
            main_returning(&format!("{}1{}", repeat("{ ", n), repeat(" }", n))),
        ),
        2 => (
            "nested if",
            main_returning(&format!(
                "{}1{}",
                repeat("if true { ", n),
                repeat(" } else { 0 }", n)
            )),
        ),
        3 => (
            "long sum",
            main_returning(&format!("0{}", repeat(" + 1", n))),
        ),
        4 => (
            "long comparison chain",
            main_returning(&format!("(1{}) as i32", repeat(" < 2", n.min(3)))),
        ),
        5 => (
            "unary chain",
            main_returning(&format!("{}1", repeat("-", n))),
        ),
        6 => (
            "not chain",
            main_returning(&format!("({}true) as i32", repeat("!", n))),
        ),
        7 => ("call chain", {
            let fs = joined(
                n,
                |i| format!("fn f{i}(x: i32) -> i32 {{ f{}(x + 1) }}\n", i + 1),
                "",
            );
            format!(
                "{fs}fn f{n}(x: i32) -> i32 {{ x }}\n{}",
                main_returning("f0(0)")
            )
        }),
        8 => (
            "many lets",
            main_returning(&format!(
                "let x0 = 1;\n{}\n    x{}",
                joined(n, |i| format!("    let x{} = x{i} + 1;", i + 1), "\n"),
                n
            )),
        ),
        9 => (
            "nested tuple",
            main_returning(&format!(
                "let t = {}1{}; 0",
                repeat("(", n),
                repeat(",)", n)
            )),
        ),
        10 => (
            "nested pointer type",
            format!(
                "fn f(p: {}i32) -> i32 {{ 0 }}\n{}",
                repeat("&", n),
                main_returning("0")
            ),
        ),
        11 => (
            "nested array type",
            format!(
                "fn f(p: &{}i32{}) -> i32 {{ 0 }}\n{}",
                repeat("[", n),
                repeat("]", n),
                main_returning("0")
            ),
        ),
        12 => (
            "huge integer literal",
            main_returning(&format!("{}1 as i32", repeat("9", n.min(20_000)))),
        ),
        13 => (
            "long string literal",
            format!(
                "#[import(cc = \"C\")] fn puts(&[u8]) -> i32;\n{}",
                main_returning(&format!("puts(\"{}\"); 0", repeat("a", n)))
            ),
        ),
        14 => (
            "nested closures",
            main_returning(&format!("let f = {}1; 0", repeat("|x: i32| ", n))),
        ),
        15 => (
            "deep recursion",
            format!(
                "fn f(n: i32) -> i32 {{ if n == 0 {{ 0 }} else {{ 1 + f(n - 1) }} }}\n{}",
                main_returning(&format!("f({n}) % 256"))
            ),
        ),
        16 => (
            "big local array",
            main_returning(&format!(
                "let a = [1; {}]; a({}) as i32",
                [n, n.saturating_mul(n), usize::MAX, 1 << 40][rng.below(4)],
                n / 2
            )),
        ),
        17 => (
            "many struct fields",
            format!(
                "struct S {{ {} }}\n{}",
                joined(n, |i| format!("f{i}: i32"), ", "),
                main_returning(&format!(
                    "let s = S {{ {} }}; 0",
                    joined(n, |i| format!("f{i} = {i}"), ", ")
                ))
            ),
        ),
        18 => (
            "many enum variants",
            format!(
                "enum E {{ {} }}\nfn f(e: E) -> i32 {{ match e {{ {} }} }}\n{}",
                joined(n.max(1), |i| format!("V{i}"), ", "),
                joined(n.max(1), |i| format!("E::V{i} => {}", i % 7), ", "),
                main_returning("f(E::V0)")
            ),
        ),
        19 => (
            "nested match",
            main_returning(&format!(
                "{}1{}",
                repeat("match 1 { 1 => ", n),
                repeat(", _ => 0 }", n)
            )),
        ),
        20 => (
            "long loop",
            main_returning(&format!(
                "let mut s = 0; let mut i = 0; while i < {n} {{ s += i; i += 1; }} s % 256"
            )),
        ),
        21 => (
            "many parameters",
            format!(
                "fn f({}) -> i32 {{ x0 }}\n{}",
                joined(n.max(1), |i| format!("x{i}: i32"), ", "),
                main_returning(&format!(
                    "f({})",
                    joined(n.max(1), |i| format!("{}", i % 100), ", ")
                ))
            ),
        ),
        22 => (
            "polymorphic nesting",
            format!(
                "fn id[T](x: T) -> T {{ x }}\n{}",
                main_returning(&format!("{}1{}", repeat("id(", n), repeat(")", n)))
            ),
        ),
        _ => (
            "generic recursion",
            format!(
            "fn f[T](n: i32, x: T) -> i32 {{ if n == 0 {{ 0 }} else {{ f(n - 1, {}x{}) }} }}\n{}",
            repeat("(", 1 + n % 3),
            repeat(", x)", 1 + n % 3),
            main_returning("f(3, 1)")
        ),
        ),
    };
    (format!("{name}, size {n}"), text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shape_is_reached() {
        let mut seen = std::collections::BTreeSet::new();
        for i in 0..2000 {
            let (what, text) = program(&mut Rng::for_input(3, i));
            assert!(text.contains("fn main"), "{what}");
            seen.insert(what.split(',').next().unwrap_or_default().to_string());
        }
        assert_eq!(seen.len(), 24, "{seen:?}");
    }
}
