//! The rest of AnyDSL's C runtime API (`anydsl_runtime.h`), for C and C++ programs that
//! call it next to durin's compiled code: device names and information, addresses of
//! page-locked memory on a device, float classification (aligned allocation is in
//! [`crate::memory`]).
//!
//! The headers are `runtime/include/anydsl_runtime.h` (C) and `anydsl_runtime.hpp` (C++,
//! with `anydsl::Array`).

use crate::error::fail;
use std::collections::HashMap;
use std::ffi::{c_char, CStr, CString};
use std::sync::Mutex;

/// Prints the platforms and their devices to standard output.
#[no_mangle]
pub extern "C" fn anydsl_info() {
    crate::print::anydsl_print_flush();
    println!("Available platforms:");
    println!("    * host: 1 device");
    println!("      - 0: the CPU");
    let n = crate::cuda::device_count();
    println!("    * CUDA: {n} device{}", if n == 1 { "" } else { "s" });
    for i in 0..n {
        let (name, arch) = crate::cuda::device_name(i);
        println!(
            "      - {}: {name} ({arch})",
            (i << 4) | crate::cuda::PLATFORM
        );
    }
}

/// Names handed out, kept for the program's lifetime (callers keep the pointer).
static NAMES: Mutex<Option<HashMap<i32, CString>>> = Mutex::new(None);

/// The name of device `dev` (`"CPU"` for the host), a string that lives as long as the
/// program.
#[no_mangle]
pub extern "C" fn anydsl_device_name(dev: i32) -> *const c_char {
    let mut guard = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    let names = guard.get_or_insert_with(HashMap::new);
    if let Some(n) = names.get(&dev) {
        return n.as_ptr();
    }
    let name = match crate::cuda::split(dev) {
        (0, _) => "CPU".to_string(),
        (crate::cuda::PLATFORM, n) => crate::cuda::device_name(n).0,
        (p, _) => fail(&format!(
            "device_name: device {dev} is on platform {p}, which this runtime does not have (0 is the host, 1 CUDA)"
        )),
    };
    let c = CString::new(name).unwrap_or_default();
    names.entry(dev).or_insert(c).as_ptr()
}

/// Whether device `dev` has `feature`. CUDA devices know `"ITS"` (independent thread
/// scheduling, compute capability 7.0 on); the host has none.
///
/// # Safety
/// `feature` is a zero-terminated string.
#[no_mangle]
pub unsafe extern "C" fn anydsl_device_check_feature_support(
    dev: i32,
    feature: *const c_char,
) -> bool {
    if feature.is_null() {
        return false;
    }
    // SAFETY: the caller's contract.
    let feature = unsafe { CStr::from_ptr(feature) }.to_string_lossy();
    match crate::cuda::split(dev) {
        (crate::cuda::PLATFORM, n) if feature == "ITS" => {
            let arch = crate::cuda::device_name(n).1;
            arch.trim_start_matches("sm_")
                .parse::<u32>()
                .is_ok_and(|cc| cc >= 70)
        }
        _ => false,
    }
}

/// The address on device `dev` of host memory `p`: `p` itself for the host; for a CUDA
/// device, the device's address of page-locked memory from `anydsl_alloc_host`.
#[no_mangle]
pub extern "C" fn anydsl_get_device_ptr(dev: i32, p: *mut u8) -> *mut u8 {
    match crate::cuda::split(dev) {
        (0, _) => p,
        (crate::cuda::PLATFORM, n) => crate::cuda::device_pointer(n, p),
        (pl, _) => fail(&format!(
            "get_device_ptr: device {dev} is on platform {pl}, which this runtime does not have (0 is the host, 1 CUDA)"
        )),
    }
}

#[no_mangle]
pub extern "C" fn anydsl_isinff(x: f32) -> i32 {
    x.is_infinite() as i32
}

#[no_mangle]
pub extern "C" fn anydsl_isnanf(x: f32) -> i32 {
    x.is_nan() as i32
}

#[no_mangle]
pub extern "C" fn anydsl_isfinitef(x: f32) -> i32 {
    x.is_finite() as i32
}

#[no_mangle]
pub extern "C" fn anydsl_isinf(x: f64) -> i32 {
    x.is_infinite() as i32
}

#[no_mangle]
pub extern "C" fn anydsl_isnan(x: f64) -> i32 {
    x.is_nan() as i32
}

#[no_mangle]
pub extern "C" fn anydsl_isfinite(x: f64) -> i32 {
    x.is_finite() as i32
}

crate::symbol_table!(
    anydsl_info,
    anydsl_device_name,
    anydsl_device_check_feature_support,
    anydsl_get_device_ptr,
    anydsl_isinff,
    anydsl_isnanf,
    anydsl_isfinitef,
    anydsl_isinf,
    anydsl_isnan,
    anydsl_isfinite,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_is_named_and_has_no_features() {
        let name = unsafe { CStr::from_ptr(anydsl_device_name(0)) };
        assert_eq!(name.to_str(), Ok("CPU"));
        let its = CString::new("ITS").unwrap();
        assert!(!unsafe { anydsl_device_check_feature_support(0, its.as_ptr()) });
        let mut x = 5u8;
        assert_eq!(anydsl_get_device_ptr(0, &mut x), &mut x as *mut u8);
    }

    #[test]
    fn floats_are_classified_as_c_does() {
        for (x, inf, nan, fin) in [
            (1.5f64, 0, 0, 1),
            (f64::INFINITY, 1, 0, 0),
            (f64::NEG_INFINITY, 1, 0, 0),
            (f64::NAN, 0, 1, 0),
        ] {
            assert_eq!(
                (anydsl_isinf(x), anydsl_isnan(x), anydsl_isfinite(x)),
                (inf, nan, fin)
            );
            let y = x as f32;
            assert_eq!(
                (anydsl_isinff(y), anydsl_isnanf(y), anydsl_isfinitef(y)),
                (inf, nan, fin)
            );
        }
    }
}
