//! CUDA's device functions for kernels run on the CPU (`--target cuda-cpu`): atomics on
//! 32-bit integers and floats (the blocks of a launch run on several threads, so these are
//! the machine's atomic instructions), `__threadfence`, `rsqrtf`. The compiler maps a
//! kernel's calls of CUDA's names to these, by the type of the value.

use std::sync::atomic::{fence, AtomicI32, AtomicU32, AtomicU64, Ordering::SeqCst};

/// The atomic at `p` (a valid, aligned address of a kernel's buffer).
unsafe fn at_i32<'a>(p: *mut i32) -> &'a AtomicI32 {
    AtomicI32::from_ptr(p)
}

/// `atomicAdd` on an `i32`: the old value.
///
/// # Safety
/// `p` is a valid, 4-byte aligned address.
#[no_mangle]
pub unsafe extern "C" fn durin_cpu_atomic_add_i32(p: *mut i32, v: i32) -> i32 {
    at_i32(p).fetch_add(v, SeqCst)
}

/// `atomicAdd` on a `u32`: the old value.
///
/// # Safety
/// As [`durin_cpu_atomic_add_i32`].
#[no_mangle]
pub unsafe extern "C" fn durin_cpu_atomic_add_u32(p: *mut u32, v: u32) -> u32 {
    AtomicU32::from_ptr(p).fetch_add(v, SeqCst)
}

/// `atomicMin` on an `i32`: the old value.
///
/// # Safety
/// As [`durin_cpu_atomic_add_i32`].
#[no_mangle]
pub unsafe extern "C" fn durin_cpu_atomic_min_i32(p: *mut i32, v: i32) -> i32 {
    at_i32(p).fetch_min(v, SeqCst)
}

/// `atomicMax` on an `i32`: the old value.
///
/// # Safety
/// As [`durin_cpu_atomic_add_i32`].
#[no_mangle]
pub unsafe extern "C" fn durin_cpu_atomic_max_i32(p: *mut i32, v: i32) -> i32 {
    at_i32(p).fetch_max(v, SeqCst)
}

/// `atomicExch` on an `i32`: the old value.
///
/// # Safety
/// As [`durin_cpu_atomic_add_i32`].
#[no_mangle]
pub unsafe extern "C" fn durin_cpu_atomic_exch_i32(p: *mut i32, v: i32) -> i32 {
    at_i32(p).swap(v, SeqCst)
}

/// `atomicCAS` on an `i32`: stores `v` where the value is `cmp`; the old value.
///
/// # Safety
/// As [`durin_cpu_atomic_add_i32`].
#[no_mangle]
pub unsafe extern "C" fn durin_cpu_atomic_cas_i32(p: *mut i32, cmp: i32, v: i32) -> i32 {
    match at_i32(p).compare_exchange(cmp, v, SeqCst, SeqCst) {
        Ok(old) | Err(old) => old,
    }
}

/// `atomicAdd` on an `f32` (a compare-and-swap loop): the old value.
///
/// # Safety
/// `p` is a valid, 4-byte aligned address.
#[no_mangle]
pub unsafe extern "C" fn durin_cpu_atomic_add_f32(p: *mut f32, v: f32) -> f32 {
    let a = AtomicU32::from_ptr(p.cast());
    let old = a
        .fetch_update(SeqCst, SeqCst, |x| Some((f32::from_bits(x) + v).to_bits()))
        .unwrap_or_else(|x| x);
    f32::from_bits(old)
}

/// `atomicAdd` on an `f64` (a compare-and-swap loop): the old value.
///
/// # Safety
/// `p` is a valid, 8-byte aligned address.
#[no_mangle]
pub unsafe extern "C" fn durin_cpu_atomic_add_f64(p: *mut f64, v: f64) -> f64 {
    let a = AtomicU64::from_ptr(p.cast());
    let old = a
        .fetch_update(SeqCst, SeqCst, |x| Some((f64::from_bits(x) + v).to_bits()))
        .unwrap_or_else(|x| x);
    f64::from_bits(old)
}

/// `__threadfence`: a full fence.
#[no_mangle]
pub extern "C" fn durin_cpu_fence() {
    fence(SeqCst)
}

/// `rsqrtf`: `1 / sqrt(x)`.
#[no_mangle]
pub extern "C" fn durin_cpu_rsqrtf(x: f32) -> f32 {
    1.0 / x.sqrt()
}

crate::symbol_table!(
    durin_cpu_atomic_add_i32,
    durin_cpu_atomic_add_u32,
    durin_cpu_atomic_min_i32,
    durin_cpu_atomic_max_i32,
    durin_cpu_atomic_exch_i32,
    durin_cpu_atomic_cas_i32,
    durin_cpu_atomic_add_f32,
    durin_cpu_atomic_add_f64,
    durin_cpu_fence,
    durin_cpu_rsqrtf
);
