//! Kernels on the CPU accelerator keep a GPU's block semantics: `barrier` separates the
//! phases of a block's threads and `reserve_shared` is the block's memory. The program
//! `tests/kernels/barriers.art` runs natively (LLVM at -O2, Cranelift at -O0) and in the
//! interpreter; its output is checked against values computed here.

use std::process::Command;

fn expected() -> String {
    let mut lines = Vec::new();
    // 1. Reversal within blocks of 16.
    let rev: Vec<String> = (0..64)
        .map(|g| (g / 16 * 16 + 15 - g % 16).to_string())
        .collect();
    lines.push(rev.join(" ") + " ");
    // 2. Inclusive prefix sums of 1 + g % 7 within blocks of 32.
    let mut sums = Vec::new();
    for block in 0..3 {
        let mut acc = 0;
        for t in 0..32 {
            acc += 1 + (block * 32 + t) % 7;
            sums.push(acc.to_string());
        }
    }
    lines.push(sums.join(" ") + " ");
    // 3. A 3-point sum of x * x over [0, 40), zero outside, on two rows.
    let v = |i: i64| if (0..40).contains(&i) { i * i } else { 0 };
    let row: Vec<String> = (0..40)
        .map(|x| (v(x - 1) + v(x) + v(x + 1)).to_string())
        .collect();
    let row = row.join(" ");
    lines.push(format!("{row} {row} "));
    // 4. Every thread of a 1000 x 1000 grid wrote its own index.
    lines.push("0".into());
    lines.join("\n") + "\n"
}

#[test]
fn barriers_and_shared_memory_on_the_cpu() {
    let want = expected();
    for (backend, level) in [("llvm", "2"), ("cranelift", "0"), ("interp", "2")] {
        let out = Command::new(env!("CARGO_BIN_EXE_durin"))
            .args(["run", "--target", "cpu", "--backend", backend, "-O", level])
            .arg("tests/kernels/barriers.art")
            .output()
            .expect("durin runs");
        assert!(
            out.status.success(),
            "{backend}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            want,
            "{backend} -O{level}"
        );
    }
}
