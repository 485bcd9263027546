//! Printing, as AnyDSL's runtime prints: C++ stream formatting (`%g` with six significant
//! digits for floats), no implicit newline. Output goes through C's buffered `stdout`;
//! [`anydsl_print_flush`] flushes it, and so does the C library at exit.

use std::ffi::{c_char, c_int};

extern "C" {
    fn printf(format: *const c_char, ...) -> c_int;
    fn putchar(c: c_int) -> c_int;
    fn fflush(stream: *mut std::ffi::c_void) -> c_int;
}

macro_rules! print_with {
    ($(#[$doc:meta] $name:ident($t:ty as $c:ty) => $fmt:literal;)*) => {$(
        #[$doc]
        #[no_mangle]
        pub extern "C" fn $name(x: $t) {
            unsafe { printf($fmt.as_ptr(), x as $c) };
        }
    )*};
}

print_with! {
    /// Prints an `i16`.
    anydsl_print_i16(i16 as c_int) => c"%d";
    /// Prints a `u16`.
    anydsl_print_u16(u16 as c_int) => c"%u";
    /// Prints an `i32`.
    anydsl_print_i32(i32 as c_int) => c"%d";
    /// Prints a `u32`.
    anydsl_print_u32(u32 as u32) => c"%u";
    /// Prints an `i64`.
    anydsl_print_i64(i64 as i64) => c"%lld";
    /// Prints a `u64`.
    anydsl_print_u64(u64 as u64) => c"%llu";
    /// Prints an `f32` (promoted to double, as C++ streams do).
    anydsl_print_f32(f32 as f64) => c"%g";
    /// Prints an `f64`.
    anydsl_print_f64(f64 as f64) => c"%g";
}

/// Prints one byte.
#[no_mangle]
pub extern "C" fn anydsl_print_char(c: u8) {
    unsafe { putchar(c as c_int) };
}

/// Prints a zero-terminated byte string (nothing for a null pointer).
///
/// # Safety
/// `s` is null or points to a zero-terminated string.
#[no_mangle]
pub unsafe extern "C" fn anydsl_print_string(s: *const c_char) {
    if !s.is_null() {
        printf(c"%s".as_ptr(), s);
    }
}

/// Flushes standard output.
#[no_mangle]
pub extern "C" fn anydsl_print_flush() {
    flush_all();
}

/// Flushes every C output stream (what `durin run` does after `main` returns).
pub fn flush_all() {
    unsafe { fflush(std::ptr::null_mut()) };
}

crate::symbol_table!(
    anydsl_print_i16,
    anydsl_print_u16,
    anydsl_print_i32,
    anydsl_print_u32,
    anydsl_print_i64,
    anydsl_print_u64,
    anydsl_print_f32,
    anydsl_print_f64,
    anydsl_print_char,
    anydsl_print_string,
    anydsl_print_flush,
);
