//! Memory: allocations aligned to 64 bytes (a cache line, and enough for any vector load),
//! release, and copies. Device numbers follow AnyDSL (0 is the host); this runtime serves
//! the host only and reports any other device as an error.

use std::ffi::c_void;

extern "C" {
    fn posix_memalign(out: *mut *mut c_void, align: usize, size: usize) -> i32;
    fn free(p: *mut c_void);
}

/// Alignment of every allocation, in bytes.
pub const ALIGN: usize = 64;

fn host_only(what: &str, dev: i32) {
    if dev != 0 {
        crate::error::fail(&format!(
            "{what}: device {dev} is not available (this runtime has only the host, device 0)"
        ));
    }
}

/// `size` bytes aligned to [`ALIGN`]; a zero size gives a valid, unique pointer.
#[no_mangle]
pub extern "C" fn anydsl_alloc(dev: i32, size: i64) -> *mut u8 {
    host_only("alloc", dev);
    if size < 0 {
        crate::error::fail(&format!("alloc: negative size {size}"));
    }
    let mut p: *mut c_void = std::ptr::null_mut();
    let rc = unsafe { posix_memalign(&mut p, ALIGN, (size as usize).max(1)) };
    if rc != 0 || p.is_null() {
        crate::error::fail(&format!("alloc: out of memory ({size} bytes)"));
    }
    p.cast()
}

/// Host memory: the same as [`anydsl_alloc`] on device 0.
#[no_mangle]
pub extern "C" fn anydsl_alloc_host(dev: i32, size: i64) -> *mut u8 {
    let _ = dev;
    anydsl_alloc(0, size)
}

/// Memory visible to host and device: host memory here.
#[no_mangle]
pub extern "C" fn anydsl_alloc_unified(dev: i32, size: i64) -> *mut u8 {
    anydsl_alloc(dev, size)
}

/// Frees memory from one of the allocation functions (null is allowed).
///
/// # Safety
/// `p` is null or came from this runtime's allocation functions and was not freed.
#[no_mangle]
pub unsafe extern "C" fn anydsl_release(dev: i32, p: *mut u8) {
    host_only("release", dev);
    free(p.cast());
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
    host_only("copy", dev_src);
    host_only("copy", dev_dst);
    if size < 0 || off_src < 0 || off_dst < 0 {
        crate::error::fail(&format!(
            "copy: negative size or offset (size {size}, offsets {off_src} and {off_dst})"
        ));
    }
    std::ptr::copy(
        src.add(off_src as usize),
        dst.add(off_dst as usize),
        size as usize,
    );
}

crate::symbol_table!(
    anydsl_alloc,
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
}
