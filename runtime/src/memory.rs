//! Memory: allocations aligned to 64 bytes (a cache line, and enough for any vector load),
//! release, and copies. Device numbers follow AnyDSL: the platform in the low four bits (0
//! the host, 1 CUDA, see [`crate::cuda`]), the device above them.

use std::ffi::c_void;

extern "C" {
    fn posix_memalign(out: *mut *mut c_void, align: usize, size: usize) -> i32;
    fn free(p: *mut c_void);
    fn madvise(addr: *mut c_void, len: usize, advice: i32) -> i32;
}

/// Alignment of every allocation, in bytes.
pub const ALIGN: usize = 64;

/// Allocations of at least this many bytes are aligned to [`HUGE_PAGE`] and asked to be
/// backed by huge pages (Linux's transparent huge pages, where the system leaves them to
/// `madvise`), as NumPy does: streaming through a large image then misses the TLB 512
/// times less often.
pub const HUGE_FROM: usize = 4 << 20;

/// The size of a huge page on x86-64 and most Linux machines.
pub const HUGE_PAGE: usize = 2 << 20;

const MADV_HUGEPAGE: i32 = 14;

/// Where device number `dev` is.
enum Place {
    Host,
    Cuda(i32),
}

fn place(what: &str, dev: i32) -> Place {
    match crate::cuda::split(dev) {
        (0, _) => Place::Host,
        (crate::cuda::PLATFORM, n) => Place::Cuda(n),
        (p, _) => crate::error::fail(&format!(
            "{what}: device {dev} is on platform {p}, which this runtime does not have (0 is the host, 1 CUDA)"
        )),
    }
}

fn check_size(what: &str, size: i64) -> usize {
    if size < 0 {
        crate::error::fail(&format!("{what}: negative size {size}"));
    }
    size as usize
}

/// `size` bytes aligned to [`ALIGN`] (to [`HUGE_PAGE`] from [`HUGE_FROM`] bytes on); a zero
/// size gives a valid, unique pointer.
#[no_mangle]
pub extern "C" fn anydsl_alloc(dev: i32, size: i64) -> *mut u8 {
    let size = check_size("alloc", size);
    if let Place::Cuda(n) = place("alloc", dev) {
        return crate::cuda::alloc_device(n, size);
    }
    let p = if size >= HUGE_FROM {
        large::take(size)
    } else {
        memalign("alloc", size, ALIGN)
    };
    crate::checks::allocated(p.cast(), size);
    p.cast()
}

/// Large host blocks (from [`HUGE_FROM`] bytes on): their sizes rounded up to whole huge
/// pages, and kept after release for the next allocation that rounds to the same size.
///
/// A program that allocates a temporary image in every call of a filter (the bilateral
/// grid's grid, the local Laplacian filter's pyramids) would otherwise have the C library
/// give the block back to the system at release and the system clear every page of it again
/// on first touch: on the development machine's CPU that was 6% of the bilateral grid of a
/// 4096 x 4096 image in a profile. At most [`KEEP_BLOCKS`] blocks and [`KEEP_BYTES`] bytes are kept, the
/// oldest released first given back.
mod large {
    use super::{free, madvise, memalign, HUGE_PAGE, MADV_HUGEPAGE};
    use std::collections::HashMap;
    use std::ffi::c_void;
    use std::sync::Mutex;

    /// The most bytes kept for reuse.
    pub const KEEP_BYTES: usize = 1 << 30;
    /// The most blocks kept for reuse.
    pub const KEEP_BLOCKS: usize = 16;

    struct Blocks {
        /// Address to rounded size, for every large block allocated and not released.
        live: HashMap<usize, usize>,
        /// Released blocks kept (address, rounded size), the oldest first.
        kept: Vec<(usize, usize)>,
    }

    static BLOCKS: Mutex<Option<Blocks>> = Mutex::new(None);

    fn with<T>(f: impl FnOnce(&mut Blocks) -> T) -> T {
        // A panic elsewhere while the lock was held leaves the lists consistent.
        let mut g = BLOCKS.lock().unwrap_or_else(|e| e.into_inner());
        f(g.get_or_insert_with(|| Blocks {
            live: HashMap::new(),
            kept: Vec::new(),
        }))
    }

    /// A block of at least `size` bytes, aligned to a huge page: a kept one of the same
    /// rounded size (the most recently released), or a new one.
    pub fn take(size: usize) -> *mut c_void {
        let rounded = size.div_ceil(HUGE_PAGE).saturating_mul(HUGE_PAGE);
        let reused = with(|b| {
            let i = b.kept.iter().rposition(|&(_, s)| s == rounded)?;
            let (p, _) = b.kept.remove(i);
            b.live.insert(p, rounded);
            Some(p)
        });
        if let Some(p) = reused {
            return p as *mut c_void;
        }
        let p = memalign("alloc", rounded, HUGE_PAGE);
        if cfg!(target_os = "linux") {
            // A hint only: its failure (no transparent huge pages) changes nothing.
            // SAFETY: the range is the allocation just made (its start huge-page aligned).
            let _ = unsafe { madvise(p, rounded, MADV_HUGEPAGE) };
        }
        with(|b| b.live.insert(p as usize, rounded));
        p
    }

    /// Keeps `p` for reuse if it is a live large block (true), giving back the oldest kept
    /// blocks beyond the limits; false if it is not one.
    pub fn give(p: *mut u8) -> bool {
        let gone = with(|b| {
            let size = b.live.remove(&(p as usize))?;
            b.kept.push((p as usize, size));
            let mut bytes: usize = b.kept.iter().map(|k| k.1).sum();
            let mut gone = Vec::new();
            while b.kept.len() > KEEP_BLOCKS || bytes > KEEP_BYTES {
                let (q, s) = b.kept.remove(0);
                bytes -= s;
                gone.push(q);
            }
            Some(gone)
        });
        let Some(gone) = gone else { return false };
        for q in gone {
            // SAFETY: a block from `memalign`, no longer live nor kept.
            unsafe { free(q as *mut c_void) }
        }
        true
    }
}

/// [`anydsl_alloc`] for a program whose CUDA kernels run on the CPU (`--target cuda-cpu`):
/// a CUDA device's memory is host memory, recorded as the device's, so that a bounds check
/// in host code stops an access to it as a GPU would ([`crate::checks`]).
#[no_mangle]
pub extern "C" fn durin_alloc_cpu_blocks(dev: i32, size: i64) -> *mut u8 {
    match place("alloc", dev) {
        Place::Cuda(n) => {
            let p = anydsl_alloc(0, size);
            crate::checks::on_device(p, n);
            p
        }
        Place::Host => anydsl_alloc(dev, size),
    }
}

/// `size` bytes (at least one) of host memory aligned to `align`, a power of two and a
/// multiple of a pointer's size; out of memory is a run-time error of `what`.
fn memalign(what: &str, size: usize, align: usize) -> *mut c_void {
    let mut p: *mut c_void = std::ptr::null_mut();
    // SAFETY: `p` is a valid out-pointer; the alignment is as `posix_memalign` wants it.
    let rc = unsafe { posix_memalign(&mut p, align, size.max(1)) };
    if rc != 0 || p.is_null() {
        crate::error::fail(&format!("{what}: out of memory ({size} bytes)"));
    }
    p
}

/// `size` bytes aligned to `align` (a power of two; at least a pointer's size is used),
/// freed with [`anydsl_aligned_free`].
#[no_mangle]
pub extern "C" fn anydsl_aligned_malloc(size: usize, align: usize) -> *mut u8 {
    if !align.is_power_of_two() {
        crate::error::fail(&format!(
            "aligned_malloc: the alignment {align} is not a power of two"
        ));
    }
    memalign(
        "aligned_malloc",
        size,
        align.max(std::mem::size_of::<usize>()),
    )
    .cast()
}

/// Frees memory from [`anydsl_aligned_malloc`] (null is allowed).
///
/// # Safety
/// `p` is null or came from `anydsl_aligned_malloc` and was not freed.
#[no_mangle]
pub unsafe extern "C" fn anydsl_aligned_free(p: *mut u8) {
    // SAFETY: the caller's contract.
    unsafe { free(p.cast()) }
}

/// Host memory: page-locked for fast copies when `dev` is a CUDA device, else the same
/// as [`anydsl_alloc`] on the host.
#[no_mangle]
pub extern "C" fn anydsl_alloc_host(dev: i32, size: i64) -> *mut u8 {
    match place("alloc_host", dev) {
        Place::Cuda(n) => crate::cuda::alloc_pinned(n, check_size("alloc_host", size)),
        Place::Host => anydsl_alloc(0, size),
    }
}

/// Memory that the host and device `dev` both address (host memory for the host).
#[no_mangle]
pub extern "C" fn anydsl_alloc_unified(dev: i32, size: i64) -> *mut u8 {
    match place("alloc_unified", dev) {
        Place::Cuda(n) => crate::cuda::alloc_unified(n, check_size("alloc_unified", size)),
        Place::Host => anydsl_alloc(0, size),
    }
}

/// Frees memory from one of the allocation functions (null is allowed).
///
/// # Safety
/// `p` is null or came from this runtime's allocation functions and was not freed.
#[no_mangle]
pub unsafe extern "C" fn anydsl_release(dev: i32, p: *mut u8) {
    match place("release", dev) {
        Place::Cuda(n) => crate::cuda::release_device(n, p),
        Place::Host => {
            if !crate::cuda::release_pinned(p) {
                crate::checks::released(p);
                if !large::give(p) {
                    free(p.cast())
                }
            }
        }
    }
}

/// Frees host memory.
///
/// # Safety
/// As [`anydsl_release`].
#[no_mangle]
pub unsafe extern "C" fn anydsl_release_host(dev: i32, p: *mut u8) {
    let _ = dev;
    anydsl_release(0, p)
}

/// Copies `size` bytes from `src + off_src` to `dst + off_dst` (the ranges may overlap).
///
/// # Safety
/// Both ranges lie within live allocations.
#[no_mangle]
pub unsafe extern "C" fn anydsl_copy(
    dev_src: i32,
    src: *const u8,
    off_src: i64,
    dev_dst: i32,
    dst: *mut u8,
    off_dst: i64,
    size: i64,
) {
    let on_host = |d| matches!(place("copy", d), Place::Host);
    if size < 0 || off_src < 0 || off_dst < 0 {
        crate::error::fail(&format!(
            "copy: negative size or offset (size {size}, offsets {off_src} and {off_dst})"
        ));
    }
    let (src, dst) = (src.add(off_src as usize), dst.add(off_dst as usize));
    if on_host(dev_src) && on_host(dev_dst) {
        std::ptr::copy(src, dst, size as usize);
    } else {
        crate::cuda::copy([dev_src, dev_dst], src, dst, size as usize);
    }
}

crate::symbol_table!(
    anydsl_aligned_malloc,
    anydsl_aligned_free,
    anydsl_alloc,
    durin_alloc_cpu_blocks,
    anydsl_alloc_host,
    anydsl_alloc_unified,
    anydsl_release,
    anydsl_release_host,
    anydsl_copy,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_aligned_and_copies_move_bytes() {
        let a = anydsl_alloc(0, 100);
        let b = anydsl_alloc(0, 100);
        assert_eq!(a as usize % ALIGN, 0);
        assert_eq!(b as usize % ALIGN, 0);
        unsafe {
            for i in 0..100 {
                *a.add(i) = i as u8;
            }
            anydsl_copy(0, a, 10, 0, b, 20, 30);
            for i in 0..30 {
                assert_eq!(*b.add(20 + i), (10 + i) as u8);
            }
            anydsl_release(0, a);
            anydsl_release(0, b);
        }
    }

    #[test]
    fn large_blocks_are_kept_for_the_next_allocation_of_their_size() {
        // Sizes no other test allocates: 37 and 38 huge pages (rounded up to them).
        let size = (37 * HUGE_PAGE - 100) as i64;
        let a = anydsl_alloc(0, size);
        assert_eq!(a as usize % HUGE_PAGE, 0);
        unsafe {
            // The whole of it is usable.
            *a = 1;
            *a.add(size as usize - 1) = 2;
            anydsl_release(0, a);
        }
        let b = anydsl_alloc(0, 37 * HUGE_PAGE as i64);
        assert_eq!(a, b, "a kept block of the same rounded size is reused");
        let c = anydsl_alloc(0, 38 * HUGE_PAGE as i64);
        assert_ne!(b, c);
        unsafe {
            anydsl_release(0, b);
            anydsl_release(0, c);
        }
        // Beyond the limit of kept blocks, the oldest are given back, not reused.
        let many: Vec<*mut u8> = (0..large::KEEP_BLOCKS + 2)
            .map(|_| anydsl_alloc(0, 37 * HUGE_PAGE as i64))
            .collect();
        for &p in &many {
            unsafe { anydsl_release(0, p) };
        }
        let d = anydsl_alloc(0, 37 * HUGE_PAGE as i64);
        assert_eq!(
            d,
            *many.last().unwrap(),
            "the most recently released is reused first"
        );
        unsafe { anydsl_release(0, d) };
    }

    #[test]
    fn aligned_allocations_are_aligned() {
        for align in [8usize, 64, 4096] {
            let p = anydsl_aligned_malloc(100, align);
            assert_eq!(p as usize % align, 0);
            unsafe { anydsl_aligned_free(p) };
        }
    }
}
