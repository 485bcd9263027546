//! The CPU's parallel loop: `anydsl_parallel_for(threads, lo, hi, body, env)` calls
//! `body(env, i)` for every `i` in `[lo, hi)`, split into contiguous chunks over `threads`
//! threads (0: one per core), and returns when all are done. The order of the calls is
//! unspecified; iterations must not depend on each other.
//!
//! The body is a closure as durin compiles it: code taking its environment first. The
//! threads are a pool kept for the life of the process (a loop starts no threads once the
//! pool has enough). A loop is cut into up to [`CHUNKS_PER_THREAD`] chunks per thread,
//! taken by whichever thread is free, so a worker that wakes late still gets its share; a
//! worker that runs out of chunks spins for [`SPIN`] before it sleeps, so that the loops
//! of a program that runs one after another (a pipeline of image operators) start on all
//! threads at once instead of waiting for the workers to wake.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

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

/// Chunks per thread: enough to balance a loop among threads that start at different
/// times, few enough that taking one (a lock) costs nothing next to its work.
const CHUNKS_PER_THREAD: u64 = 4;

/// How long an idle worker looks for work before it sleeps.
const SPIN: std::time::Duration = std::time::Duration::from_micros(200);

/// One contiguous chunk of a loop, and the loop's count of chunks left.
struct Job {
    shared: Shared,
    start: i64,
    end: i64,
    latch: Arc<Latch>,
}

impl Job {
    fn run(self) {
        for i in self.start..self.end {
            (self.shared.body)(self.shared.env, i as i32);
        }
        self.latch.done();
    }
}

/// Counts a loop's chunks down to zero and wakes the caller waiting for it.
struct Latch {
    left: AtomicUsize,
    lock: Mutex<()>,
    zero: Condvar,
}

impl Latch {
    fn done(&self) {
        if self.left.fetch_sub(1, Ordering::AcqRel) == 1 {
            let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
            self.zero.notify_all();
        }
    }
}

/// Worker threads, started on first use and kept for the life of the process; their count
/// grows to the most threads a loop has asked for (minus the caller, which works too).
struct Pool {
    queue: Mutex<VecDeque<Job>>,
    /// The queue's length, for spinning workers to read without the lock.
    queued: AtomicUsize,
    ready: Condvar,
    workers: AtomicUsize,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| Pool {
        queue: Mutex::new(VecDeque::new()),
        queued: AtomicUsize::new(0),
        ready: Condvar::new(),
        workers: AtomicUsize::new(0),
    })
}

/// The most worker threads the pool starts.
const MAX_WORKERS: usize = 256;

impl Pool {
    fn ensure_workers(&'static self, n: usize) {
        let n = n.min(MAX_WORKERS);
        while self.workers.load(Ordering::Acquire) < n {
            let have = self.workers.fetch_add(1, Ordering::AcqRel);
            if have >= n {
                self.workers.fetch_sub(1, Ordering::AcqRel);
                break;
            }
            let started = std::thread::Builder::new()
                .name(format!("durin-worker-{have}"))
                .spawn(move || self.work());
            if started.is_err() {
                // No more threads: the callers run what is left themselves.
                self.workers.fetch_sub(1, Ordering::AcqRel);
                break;
            }
        }
    }

    fn work(&self) {
        loop {
            self.spin();
            let job = {
                let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
                loop {
                    if let Some(j) = q.pop_front() {
                        self.queued.store(q.len(), Ordering::Release);
                        break j;
                    }
                    q = self.ready.wait(q).unwrap_or_else(|e| e.into_inner());
                }
            };
            job.run();
        }
    }

    /// Waits up to [`SPIN`] for a job to be queued, without sleeping.
    fn spin(&self) {
        let start = std::time::Instant::now();
        while self.queued.load(Ordering::Acquire) == 0 {
            for _ in 0..64 {
                std::hint::spin_loop();
            }
            if start.elapsed() > SPIN {
                return;
            }
        }
    }

    fn push(&self, jobs: impl Iterator<Item = Job>) {
        let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        q.extend(jobs);
        self.queued.store(q.len(), Ordering::Release);
    }

    fn try_pop(&self) -> Option<Job> {
        let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        let j = q.pop_front();
        self.queued.store(q.len(), Ordering::Release);
        j
    }
}

/// The cores this process may use, asked once: the standard library reads the control
/// group's quota files each time it is asked (in a profile of a 5x5 Gaussian of 1024 x
/// 1024 pixels on two threads, a fifth of the calling thread's time).
fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |c| c.get()))
}

/// Runs `body(env, i)` for `i` in `[lo, hi)` on `threads` threads (0: all cores): the
/// caller runs the first chunk and the pool's workers the others. While it waits for them
/// the caller runs queued chunks itself, so a loop nested in a loop's body cannot deadlock.
#[no_mangle]
pub extern "C" fn anydsl_parallel_for(threads: i32, lo: i32, hi: i32, body: Body, env: *mut u8) {
    if hi <= lo {
        return;
    }
    let n = (hi as i64 - lo as i64) as u64;
    let cores = cores();
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
    let chunk = n.div_ceil(t as u64 * CHUNKS_PER_THREAD) as i64;
    let chunks = (n as i64 + chunk - 1) / chunk;
    let latch = Arc::new(Latch {
        left: AtomicUsize::new(chunks as usize),
        lock: Mutex::new(()),
        zero: Condvar::new(),
    });
    let p = pool();
    p.ensure_workers(t - 1);
    let job = |k: i64| Job {
        shared,
        start: lo as i64 + k * chunk,
        end: (lo as i64 + (k + 1) * chunk).min(hi as i64),
        latch: latch.clone(),
    };
    p.push((1..chunks).map(job));
    p.ready.notify_all();
    job(0).run();
    let mut idle = None;
    while latch.left.load(Ordering::Acquire) != 0 {
        if let Some(j) = (p.queued.load(Ordering::Acquire) > 0)
            .then(|| p.try_pop())
            .flatten()
        {
            j.run();
            continue;
        }
        // The last chunks are running on other threads: spin a while, then sleep.
        let since = *idle.get_or_insert_with(std::time::Instant::now);
        if since.elapsed() < SPIN {
            std::hint::spin_loop();
            continue;
        }
        let g = latch.lock.lock().unwrap_or_else(|e| e.into_inner());
        if latch.left.load(Ordering::Acquire) != 0 {
            let _g = latch
                .zero
                .wait_timeout(g, std::time::Duration::from_millis(1))
                .unwrap_or_else(|e| e.into_inner());
        }
    }
}

crate::symbol_table!(anydsl_parallel_for);

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

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

    extern "C" fn nested(env: *mut u8, i: i32) {
        // Each outer index runs an inner parallel loop over [0, i).
        anydsl_parallel_for(3, 0, i, add_index, env);
    }

    #[test]
    fn nested_loops_and_many_loops_finish() {
        let sum = AtomicU64::new(0);
        anydsl_parallel_for(4, 0, 64, nested, &sum as *const _ as *mut u8);
        let want: u64 = (0..64u64).map(|i| (0..i).sum::<u64>()).sum();
        assert_eq!(sum.load(Ordering::Relaxed), want);
        for _ in 0..2000 {
            let sum = AtomicU64::new(0);
            anydsl_parallel_for(0, 0, 16, add_index, &sum as *const _ as *mut u8);
            assert_eq!(sum.load(Ordering::Relaxed), 120);
        }
    }
}
