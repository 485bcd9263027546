//! The CPU's parallel loop: `anydsl_parallel_for(threads, lo, hi, body, env)` calls
//! `body(env, i)` for every `i` in `[lo, hi)`, split into contiguous chunks over `threads`
//! threads (0: one per core), and returns when all are done. The order of the calls is
//! unspecified; iterations must not depend on each other.
//!
//! The body is a closure as durin compiles it: code taking its environment first.

/// The body's code: `(environment, index)`.
pub type Body = extern "C" fn(*mut u8, i32);

#[derive(Clone, Copy)]
struct Shared {
    body: Body,
    env: *mut u8,
}

// SAFETY: the environment is read by the body's code; that the iterations may run at the
// same time is what a parallel loop promises its caller and what the caller promises back.
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

/// Runs `body(env, i)` for `i` in `[lo, hi)` on `threads` threads (0: all cores).
#[no_mangle]
pub extern "C" fn anydsl_parallel_for(threads: i32, lo: i32, hi: i32, body: Body, env: *mut u8) {
    if hi <= lo {
        return;
    }
    let n = (hi as i64 - lo as i64) as u64;
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let t = if threads <= 0 {
        cores
    } else {
        threads as usize
    };
    let t = (t as u64).clamp(1, n) as usize;
    let shared = Shared { body, env };
    if t == 1 {
        for i in lo..hi {
            body(env, i);
        }
        return;
    }
    let chunk = n.div_ceil(t as u64);
    std::thread::scope(|s| {
        for k in 0..t as u64 {
            let start = lo as i64 + (k * chunk) as i64;
            let end = (start + chunk as i64).min(hi as i64);
            if start >= end {
                break;
            }
            s.spawn(move || {
                let sh = shared;
                for i in start..end {
                    (sh.body)(sh.env, i as i32);
                }
            });
        }
    });
}

crate::symbol_table!(anydsl_parallel_for);

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    extern "C" fn add_index(env: *mut u8, i: i32) {
        let sum = unsafe { &*(env as *const AtomicU64) };
        sum.fetch_add(i as u64, Ordering::Relaxed);
    }

    #[test]
    fn every_index_runs_once_for_any_thread_count() {
        for threads in [0, 1, 3, 64] {
            let sum = AtomicU64::new(0);
            anydsl_parallel_for(threads, 5, 1005, add_index, &sum as *const _ as *mut u8);
            assert_eq!(
                sum.load(Ordering::Relaxed),
                (5..1005).sum::<u64>(),
                "{threads} threads"
            );
        }
        let sum = AtomicU64::new(0);
        anydsl_parallel_for(4, 10, 10, add_index, &sum as *const _ as *mut u8);
        assert_eq!(sum.load(Ordering::Relaxed), 0);
    }
}
