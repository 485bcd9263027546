//! Clocks: microseconds and nanoseconds from a monotonic clock (differences are what
//! matter; the origin is the first call).

use std::sync::OnceLock;
use std::time::Instant;

fn since_start() -> std::time::Duration {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed()
}

/// Microseconds since the first clock call of the process.
#[no_mangle]
pub extern "C" fn anydsl_get_micro_time() -> i64 {
    since_start().as_micros() as i64
}

/// Nanoseconds since the first clock call of the process.
#[no_mangle]
pub extern "C" fn anydsl_get_nano_time() -> i64 {
    since_start().as_nanos() as i64
}

crate::symbol_table!(anydsl_get_micro_time, anydsl_get_nano_time);
