//! A seeded pseudo-random generator (SplitMix64), one per process; the same seed gives the
//! same sequence here and in the IR interpreter.

use std::sync::atomic::{AtomicU64, Ordering};

static STATE: AtomicU64 = AtomicU64::new(0x853c_49e6_748f_ea9b);

/// The next 64 random bits.
fn next() -> u64 {
    let s = STATE
        .fetch_add(0x9e37_79b9_7f4a_7c15, Ordering::Relaxed)
        .wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = s;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Restarts the sequence from `seed`.
#[no_mangle]
pub extern "C" fn anydsl_random_seed(seed: u32) {
    STATE.store(seed as u64, Ordering::Relaxed);
}

/// A float uniformly drawn from [0, 1).
#[no_mangle]
pub extern "C" fn anydsl_random_val_f32() -> f32 {
    (next() >> 40) as f32 * (1.0 / (1u64 << 24) as f32)
}

/// 64 random bits.
#[no_mangle]
pub extern "C" fn anydsl_random_val_u64() -> u64 {
    next()
}

crate::symbol_table!(
    anydsl_random_seed,
    anydsl_random_val_f32,
    anydsl_random_val_u64
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_lie_in_the_unit_interval_and_seeds_repeat() {
        anydsl_random_seed(7);
        let a: Vec<f32> = (0..1000).map(|_| anydsl_random_val_f32()).collect();
        assert!(a.iter().all(|&x| (0.0..1.0).contains(&x)));
        let mean = a.iter().sum::<f32>() / a.len() as f32;
        assert!((mean - 0.5).abs() < 0.05, "mean {mean}");
        anydsl_random_seed(7);
        let b: Vec<f32> = (0..1000).map(|_| anydsl_random_val_f32()).collect();
        assert_eq!(a, b);
    }
}
