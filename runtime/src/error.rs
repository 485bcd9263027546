//! Run-time errors: a message on standard error and exit status 101 (after flushing what
//! the program printed), never an abort without a word.

use std::ffi::{c_char, CStr};

/// Reports a run-time error of compiled code (`message` is a zero-terminated string) and
/// exits with status 101.
///
/// # Safety
/// `message` is null or points to a zero-terminated string.
#[no_mangle]
pub unsafe extern "C" fn durin_runtime_error(message: *const c_char) -> ! {
    let text = if message.is_null() {
        "unknown error".into()
    } else {
        CStr::from_ptr(message).to_string_lossy()
    };
    fail(&text)
}

/// [`durin_runtime_error`] of a call at `place` (a zero-terminated string: the program's
/// place, which the compiler finds for a call in library code).
///
/// # Safety
/// `message` and `place` are null or point to zero-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn durin_runtime_error_at(message: *const c_char, place: *const c_char) -> ! {
    let text = |p: *const c_char, none: &'static str| {
        if p.is_null() {
            none.into()
        } else {
            CStr::from_ptr(p).to_string_lossy()
        }
    };
    fail(&format!(
        "{}: {}",
        text(place, "<unknown place>"),
        text(message, "unknown error")
    ))
}

/// Flushes standard output, prints `error: {message}` on standard error, exits with 101.
pub fn fail(message: &str) -> ! {
    crate::print::flush_all();
    // Written to the stream itself, not through `eprintln!`, which a test harness running
    // compiled code in-process would capture and lose at the exit below.
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "error: run-time error: {message}");
    std::process::exit(101)
}

crate::symbol_table!(durin_runtime_error, durin_runtime_error_at);
