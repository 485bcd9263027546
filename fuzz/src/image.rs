//! Generated image-library programs: a few operators in a row over images of random sizes
//! (0 and 1 among them), with random radii, boundary modes, pipelines, masks, views and
//! graphs of lazy images (stored results among them),
//! scheduled for whatever the target is (`default_schedule`: the CPU, or the GPU's tiles,
//! which `--target cuda-cpu` and the interpreter with `--target cuda` run without a GPU).
//! The program prints a weighted sum of its result, so that every mode must agree on each
//! pixel.

use crate::rng::Rng;

/// Image sizes: empty, one pixel, smaller than a mask, odd, and tall enough for several
/// bands of a fused CPU operator.
const SIZES: &[i32] = &[0, 1, 2, 3, 5, 8, 13, 31, 70, 130];

/// Radii: none, small, the widest unrolled mask and beyond.
const RADII: &[i32] = &[0, 1, 2, 3, 16, 17, 40];

/// Boundary modes, as source text.
const MODES: &[&str] = &[
    "clamp",
    "mirror",
    "mirror101",
    "repeat",
    "constant(0.5 as f32)",
];

/// A lazy image of up to `depth` operators over inputs `0..inputs`, its stored results
/// numbered from `*next` on (each above those it reads).
fn lazy(rng: &mut Rng, depth: u32, inputs: usize, next: &mut i32) -> String {
    if depth == 0 || rng.one_in(4) {
        return format!("lazy_input({})", rng.below(inputs));
    }
    let r = |rng: &mut Rng| rng.below(3) as i32;
    let mut inner = |rng: &mut Rng| lazy(rng, depth - 1, inputs, next);
    match rng.below(7) {
        0 => {
            let a = inner(rng);
            let (rx, ry) = (r(rng), r(rng));
            format!("lazy_convolve({a}, mask_fn({rx}, {ry}, @|dx, dy| (dx - 2 * dy) as f32 * 0.125 as f32 + 0.25 as f32))")
        }
        1 => {
            let a = inner(rng);
            let (h, v) = (r(rng), r(rng));
            format!("lazy_sep({a}, box1({h}), gaussian1({v}, 1.0))")
        }
        2 => {
            let a = inner(rng);
            format!("lazy_across({a}, gaussian1({}, 0.8))", r(rng))
        }
        3 => {
            let a = inner(rng);
            format!("lazy_down({a}, box1({}))", r(rng))
        }
        4 => {
            let a = inner(rng);
            format!("lazy_map({a}, @|v| v * 0.75 as f32 + 0.125 as f32)")
        }
        5 => {
            let (a, b) = (inner(rng), inner(rng));
            format!("lazy_map2({a}, {b}, @|x, y| x - y * 0.5 as f32)")
        }
        _ => {
            let a = inner(rng);
            let id = *next;
            *next += 1;
            format!("lazy_store({id}, {a})")
        }
    }
}

/// One operator from image `s` into image `d` (both `w` x `h`, names in the program).
fn operator(rng: &mut Rng, s: &str, d: &str) -> (String, String) {
    let bh = *rng.pick(MODES);
    let r = |rng: &mut Rng| *rng.pick(RADII);
    let small = |rng: &mut Rng| rng.below(4) as i32;
    match rng.below(10) {
        8 => {
            // A graph of lazy images: of `s` alone, or of `s` as two inputs.
            let inputs = 1 + rng.below(2);
            let graph = lazy(rng, 3, inputs, &mut 0);
            let stored = graph.matches("lazy_store").count();
            (
                format!("realize of {inputs} input(s), {stored} stored, {bh}"),
                format!("realize_n(@|_i| {s}, {inputs}, {d}, {graph}, {bh}, sched);"),
            )
        }
        0 => (
            "map1".into(),
            format!("map1({s}, {d}, sched, @|v| v * 0.75 as f32 + 0.125 as f32);"),
        ),
        1 => (
            "map2".into(),
            format!("map2({s}, {s}, {d}, sched, @|a, b| a - b * 0.5 as f32);"),
        ),
        2 => {
            let (rx, ry) = (small(rng), small(rng));
            (
                format!("local {rx}x{ry} {bh}"),
                format!(
                    "local({s}, {d}, {rx}, {ry}, {bh}, sched, @|win, x, y| win(-{rx}, 0) + win({rx}, {ry}) * 0.5 as f32 + (x % 3 - y % 2) as f32 * 0.25 as f32);"
                ),
            )
        }
        3 => {
            let (rx, ry) = (small(rng), small(rng));
            (
                format!("convolve {rx}x{ry} {bh}"),
                format!(
                    "convolve({s}, {d}, mask_fn({rx}, {ry}, @|dx, dy| (dx + 2 * dy) as f32 * 0.125 as f32 + 0.0625 as f32), {bh}, sched);"
                ),
            )
        }
        4 => {
            let (a, b) = (r(rng), r(rng));
            (
                format!("convolve_sep box1({a}) gaussian1({b}) {bh}"),
                format!(
                    "convolve_sep({s}, {d}, box1({a}), gaussian1({b}, 1.5), {bh}, sched);"
                ),
            )
        }
        5 => {
            let (a, b) = (r(rng), r(rng));
            (
                format!("convolve_sep mask1_fn({a}, {b}) {bh}"),
                format!(
                    "convolve_sep({s}, {d}, mask1_fn({a}, @|x| (x + 1) as f32 * 0.25 as f32), mask1_fn({b}, @|y| 0.5 as f32 - (y % 3) as f32 * 0.125 as f32), {bh}, sched);"
                ),
            )
        }
        6 => {
            let n = *rng.pick(&[1, 2, 3, 12]);
            (
                format!("pipeline of {n} {bh}"),
                format!(
                    "pipeline({s}, {d}, {n}, @|k| stage(1, k % 2, @|win, _x, _y| 0.5 as f32 * win(-1, 0) + 0.375 as f32 * win(0, k % 2) + 0.125 as f32 * win(1, -(k % 2))), {bh}, sched);"
                ),
            )
        }
        7 => (
            "local2".into(),
            format!(
                "local2({s}, {s}, {d}, 1, 1, {bh}, sched, @|a, b, _x, _y| a(-1, 1) - b(1, -1) * 0.5 as f32);"
            ),
        ),
        _ => (
            "generate".into(),
            format!("generate({d}, sched, @|x, y| ((x * 5 + y * 3) % 7) as f32 * 0.5 as f32);"),
        ),
    }
}

/// A program and its description.
pub fn program(rng: &mut Rng) -> (String, String) {
    let (w, h) = (*rng.pick(SIZES), *rng.pick(SIZES));
    let mut body = String::new();
    let mut what = vec![format!("image program {w}x{h}")];
    // A view inside the images: the operators then run on views of both.
    let view = w > 2 && h > 2 && rng.one_in(4);
    let (s, d) = if view {
        let (x, y) = (rng.below(2) as i32, rng.below(2) as i32);
        let (vw, vh) = (w - x - rng.below(2) as i32, h - y - rng.below(2) as i32);
        what.push(format!("views {vw}x{vh} at ({x}, {y})"));
        body.push_str(&format!(
            "    let va = img_view(a, {x}, {y}, {vw}, {vh});\n    let vb = img_view(b, {x}, {y}, {vw}, {vh});\n"
        ));
        ("va", "vb")
    } else {
        ("a", "b")
    };
    let n = 1 + rng.below(3);
    let mut names = (s, d);
    for _ in 0..n {
        let (name, text) = operator(rng, names.0, names.1);
        what.push(name);
        body.push_str(&format!("    {text}\n"));
        names = (names.1, names.0);
    }
    // The last result is in `names.0` (a view, or a whole image).
    let last = if names.0 == "va" || names.0 == "a" {
        "a"
    } else {
        "b"
    };
    let text = format!(
        "fn main() -> i32 {{
    let sched = default_schedule();
    let (w, h) = ({w}, {h});
    let host = img_new(w, h);
    generate(host, cpu_default(), @|x, y| ((x * 7 + y * 13) % 17) as f32 * 0.25 as f32 - 1.0 as f32);
    let a = img_for(sched, w, h);
    let b = img_for(sched, w, h);
    img_copy(host, a);
    img_copy(host, b);
{body}    img_copy({last}, host);
    let mut sum = 0.0;
    for y in range(0, h) {{
        for x in range(0, w) {{ sum += img_get(host, x, y) as f64 * ((x * 3 + y * 5) % 7 + 1) as f64 }}
    }}
    print_f64(sum); print_char('\\n');
    0
}}
"
    );
    (what.join(", "), text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_have_a_main_and_vary() {
        let mut seen = std::collections::BTreeSet::new();
        for i in 0..200 {
            let (what, text) = program(&mut Rng::for_input(3, i));
            assert!(text.contains("fn main"), "{what}");
            seen.insert(what);
        }
        assert!(seen.len() > 150, "only {} different programs", seen.len());
    }
}
