//! Shrinking a failing input to a small one that fails the same way.

use crate::mutate::tokens;
use crate::oracle::{Failure, Input, Oracle};
use std::path::Path;
use std::time::{Duration, Instant};

/// The most checks one minimization runs, and the longest it takes.
pub struct Budget {
    /// Checks.
    pub checks: usize,
    /// Wall-clock time.
    pub time: Duration,
}

/// Removes chunks of `parts` (halves, quarters, ... single parts) while `fails` holds.
fn reduce(parts: Vec<Vec<u8>>, fails: &mut dyn FnMut(&[u8]) -> Option<bool>) -> Vec<Vec<u8>> {
    let mut parts = parts;
    let mut chunk = parts.len().div_ceil(2).max(1);
    loop {
        let mut at = 0;
        while at < parts.len() {
            let end = (at + chunk).min(parts.len());
            let candidate: Vec<u8> = parts[..at]
                .iter()
                .chain(&parts[end..])
                .flatten()
                .copied()
                .collect();
            match fails(&candidate) {
                None => return parts,
                Some(true) => {
                    parts.drain(at..end);
                }
                Some(false) => at = end,
            }
        }
        if chunk == 1 {
            return parts;
        }
        chunk = chunk.div_ceil(2);
    }
}

/// A smaller input that fails like `failure` (same class, same step), found by removing
/// lines, then tokens, within `budget`. Returns the input and the number of checks run.
pub fn minimize(
    oracle: &Oracle,
    input: &Input,
    failure: &Failure,
    file: &Path,
    budget: &Budget,
) -> (Input, u64) {
    let start = Instant::now();
    let mut checks = 0usize;
    let mut runs = 0u64;
    let mut fails = |text: &[u8]| -> Option<bool> {
        if checks >= budget.checks || start.elapsed() > budget.time {
            return None;
        }
        checks += 1;
        let candidate = Input {
            text: text.to_vec(),
            ..input.clone()
        };
        Some(matches!(oracle.check(&candidate, file, &mut runs),
            Err(f) if f.class == failure.class && f.step == failure.step))
    };
    let lines: Vec<Vec<u8>> = input
        .text
        .split_inclusive(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect();
    let text: Vec<u8> = reduce(lines, &mut fails).concat();
    let toks: Vec<Vec<u8>> = tokens(&text).into_iter().map(<[u8]>::to_vec).collect();
    let text = reduce(toks, &mut fails).concat();
    (
        Input {
            text,
            ..input.clone()
        },
        runs,
    )
}

#[cfg(test)]
mod tests {
    use super::reduce;

    #[test]
    fn reduce_keeps_only_what_the_failure_needs() {
        let parts: Vec<Vec<u8>> = b"abcdefghij".iter().map(|&b| vec![b]).collect();
        // "Fails" while both 'c' and 'h' are there.
        let mut fails = |t: &[u8]| Some(t.contains(&b'c') && t.contains(&b'h'));
        assert_eq!(reduce(parts, &mut fails).concat(), b"ch".to_vec());
    }
}
