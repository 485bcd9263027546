//! The cost model of shared-memory staging: for one buffer of one kernel, what staging
//! saves and what it costs, counted in the memory instructions a block issues.
//!
//! A block of `B` threads (`W` warps) that reads a buffer at `L` places per thread issues,
//! without staging, `L * W` warp loads; on a GPU whose L1 cache holds what the resident
//! blocks read (Hopper: 256 KiB per SM shared with shared memory), those loads hit the L1,
//! and the tile's lines come from L2 once. With staging it issues the fill (one warp load,
//! one shared store and the index arithmetic for every `B` elements of the tile, per warp),
//! a barrier, and `L * W` shared loads: on Hopper a shared load and an L1 hit go through
//! the same unit at the same rate, so staging saves only where the L1 does not hold the
//! resident blocks' tiles (each read of a tile element then costs a line from L2), and it
//! loses the fill and the barrier everywhere else. A mask (every thread reads the same
//! elements) is a broadcast either way.
//!
//! Staging also takes shared memory, which may leave fewer blocks resident on an SM; below
//! half the SM's threads, the model counts the lost latency hiding as proportionally more
//! cost.
//!
//! The constants are the H100's (sm_90). The book's chapter on shared memory compares the
//! estimates with times measured there.
//!
//! The decision the `stage` pass records for each buffer ([`Staging`]) and the modes that
//! steer it ([`StageMode`]) live here too, so that read-only tracing, which carries the
//! decision for the report, depends on the model and not on the pass.

/// How `stage` chooses the buffers to stage (the hints in a kernel's code override it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StageMode {
    /// None.
    Off,
    /// Every buffer that can be staged.
    On,
    /// The buffers the cost model expects a gain from.
    #[default]
    Auto,
}

/// What staging decided for one read-only buffer of a kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Staging {
    /// Whether it was staged.
    pub staged: bool,
    /// Why, in words.
    pub why: String,
    /// The cost model's estimate, where the buffer can be staged.
    pub estimate: Option<Estimate>,
    /// The shared memory its tile takes (bytes), where it can be staged.
    pub bytes: i64,
}

/// What the model knows of the GPU.
#[derive(Clone, Copy, Debug)]
pub struct Gpu {
    /// L1 cache and shared memory together, per SM (bytes).
    pub l1_and_shared: i64,
    /// The most shared memory per SM (bytes).
    pub shared_per_sm: i64,
    /// Shared memory the system reserves per block (bytes).
    pub shared_reserved: i64,
    /// The most threads resident per SM.
    pub threads_per_sm: i64,
    /// The most blocks resident per SM.
    pub blocks_per_sm: i64,
    /// Cost of a warp's load that hits the L1.
    pub l1_hit: f64,
    /// Cost of a warp's shared load or store.
    pub shared_access: f64,
    /// Cost of a 128-byte line from L2 into an SM.
    pub line: f64,
    /// Cost of the fill's index arithmetic (stepping the element's column and row, the
    /// boundary handler) per element per warp.
    pub fill_index: f64,
    /// Cost of a barrier per warp.
    pub barrier: f64,
}

/// The H100 (sm_90).
pub const SM90: Gpu = Gpu {
    l1_and_shared: 256 * 1024,
    shared_per_sm: 228 * 1024,
    shared_reserved: 1024,
    threads_per_sm: 2048,
    blocks_per_sm: 32,
    l1_hit: 1.0,
    shared_access: 1.0,
    line: 4.0,
    fill_index: 1.0,
    barrier: 1.0,
};

/// Below this estimated gain (a fraction of the block's memory instructions for the
/// buffer), `--shm auto` does not stage: the model is coarse, and staging must never make
/// a kernel slower.
pub const THRESHOLD: f64 = 0.05;

/// What one buffer's staging would do.
#[derive(Clone, Copy, Debug)]
pub struct Use {
    /// Threads per block.
    pub threads: i64,
    /// Different places each thread reads.
    pub reads: i64,
    /// Elements of the tile (the whole mask, for a mask).
    pub tile: i64,
    /// Bytes per element.
    pub elem: i64,
    /// Whether every thread reads the same elements.
    pub uniform: bool,
    /// Shared memory of the kernel's tiles, this one included (bytes).
    pub shared: i64,
}

/// The model's estimate for one buffer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// Cost without staging, in warp memory instructions per block.
    pub unstaged: f64,
    /// Cost with staging.
    pub staged: f64,
    /// Blocks resident per SM without and with staging.
    pub resident: (i64, i64),
    /// Whether the resident blocks' tiles fit in the L1 without staging.
    pub fits_l1: bool,
}

impl Estimate {
    /// The fraction of the block's memory instructions for the buffer staging saves
    /// (negative: it costs).
    pub fn gain(&self) -> f64 {
        (self.unstaged - self.staged) / self.unstaged.max(1e-9)
    }
}

/// The estimate for `u` on `gpu`.
pub fn estimate(gpu: &Gpu, u: &Use) -> Estimate {
    let threads = u.threads.max(1);
    let warps = ((threads + 31) / 32) as f64;
    let by_threads = (gpu.threads_per_sm / threads).clamp(1, gpu.blocks_per_sm);
    let by_shared = gpu.shared_per_sm / (u.shared + gpu.shared_reserved).max(1);
    let resident = (by_threads, by_threads.min(by_shared).max(1));
    let tile_bytes = u.tile * u.elem;
    let lines = (tile_bytes as f64 / 128.0).ceil();
    let reads = u.reads as f64 * warps;
    // Without staging: the L1 holds what the resident blocks read unless their tiles
    // overflow what shared memory leaves of it (none, without staging); then each read of
    // a tile element may bring its line again, up to every read.
    let l1 = gpu.l1_and_shared;
    let overflow = (resident.0 * tile_bytes) as f64 / l1 as f64;
    let fits_l1 = u.uniform || overflow <= 1.0;
    let refetch = if fits_l1 {
        1.0
    } else {
        let reuse = (u.reads * threads) as f64 / u.tile.max(1) as f64;
        overflow.min(reuse.max(1.0))
    };
    let unstaged = reads * gpu.l1_hit + lines * refetch * gpu.line;
    // With staging: the fill, the barrier, the shared loads, and the tile's lines once.
    let rounds = ((u.tile + threads - 1) / threads) as f64;
    let fill = rounds * warps * (gpu.l1_hit + gpu.shared_access + gpu.fill_index);
    let mut staged = fill + warps * gpu.barrier + reads * gpu.shared_access + lines * gpu.line;
    // Fewer resident threads hide less latency.
    let half = gpu.threads_per_sm / 2;
    let (before, after) = (resident.0 * threads, resident.1 * threads);
    if after < before && after < half {
        staged *= half as f64 / after as f64;
    }
    Estimate {
        unstaged,
        staged,
        resident,
        fits_l1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tile_5x5() -> Use {
        // 32 x 4 threads, a 5x5 stencil: a tile of 36 x 8 floats.
        Use {
            threads: 128,
            reads: 25,
            tile: 36 * 8,
            elem: 4,
            uniform: false,
            shared: 36 * 8 * 4,
        }
    }

    #[test]
    fn a_small_stencil_tile_is_not_worth_staging_when_the_l1_holds_it() {
        let e = estimate(&SM90, &tile_5x5());
        assert!(e.fits_l1);
        // The fill (3 rounds of 3 per warp) and the barrier, nothing saved.
        assert_eq!(e.unstaged, 25.0 * 4.0 + 9.0 * 4.0);
        assert_eq!(e.staged, 3.0 * 4.0 * 3.0 + 4.0 + 100.0 + 36.0);
        assert!(e.gain() < 0.0);
    }

    #[test]
    fn a_mask_is_a_broadcast_either_way() {
        let u = Use {
            uniform: true,
            tile: 5,
            reads: 5,
            shared: 20,
            ..tile_5x5()
        };
        assert!(estimate(&SM90, &u).gain() < 0.0);
    }

    #[test]
    fn tiles_that_overflow_the_l1_gain_from_staging() {
        // 1024 threads each reading 441 places of a 52 x 52 tile of doubles (two blocks
        // resident: 43 KiB of tiles), on a GPU with an L1 of 8 KiB: the lines come again
        // for many reads.
        let gpu = Gpu {
            l1_and_shared: 8 * 1024,
            ..SM90
        };
        let u = Use {
            threads: 1024,
            reads: 441,
            tile: 52 * 52,
            elem: 8,
            uniform: false,
            shared: 52 * 52 * 8,
        };
        let e = estimate(&gpu, &u);
        assert!(!e.fits_l1);
        assert!(e.gain() > THRESHOLD, "{e:?}");
    }

    #[test]
    fn losing_occupancy_costs() {
        let small = estimate(&SM90, &tile_5x5());
        let big = estimate(
            &SM90,
            &Use {
                shared: 40 * 1024,
                ..tile_5x5()
            },
        );
        assert!(big.resident.1 < small.resident.1);
        assert!(big.staged > small.staged);
    }
}
