//! durin's runtime: the C-ABI functions that compiled programs call.
//!
//! The names are those of AnyDSL's runtime (`anydsl_print_i32`, `anydsl_alloc`, ...), so the
//! standard library's imports resolve to them. Programs link this crate as a static library
//! (`libdurin_runtime.a`) when built ahead of time; the JIT maps the same functions by
//! address ([`symbols`]). It depends on no compiler crate.
//!
//! - [`print`]: printing as C++ streams print (through C's `stdout`, so output interleaves
//!   correctly with C code linked into the same program);
//! - [`memory`]: 64-byte aligned allocation, release and copies;
//! - [`time`]: microsecond and nanosecond clocks;
//! - [`random`]: a seeded pseudo-random generator;
//! - [`parallel`]: the CPU's parallel loop;
//! - [`thread`]: threads started by `spawn` and joined by `sync`;
//! - [`blocks`]: kernels on the CPU, with blocks, barriers and shared memory;
//! - [`cuda`]: the CUDA platform (devices, memory, NVRTC, the kernel cache, launches);
//! - [`device`]: CUDA's device functions (atomics ...) for kernels run on the CPU;
//! - [`error`]: run-time errors reported as messages;
//! - [`half`]: half-float conversions for back ends that keep `f16` as bits;
//! - [`image`]: PNG, JPEG and PGM/PPM files as arrays of `f32` samples;
//! - [`anydsl`]: the rest of AnyDSL's C API (device names, float classification ...), for
//!   C and C++ programs through `include/anydsl_runtime.h` and `.hpp`.

pub mod anydsl;
pub mod blocks;
pub mod checks;
pub mod cuda;
pub mod device;
pub mod error;
pub mod half;
pub mod image;
pub mod memory;
pub mod parallel;
pub mod print;
pub mod random;
pub mod thread;
pub mod time;

/// Every function of the runtime with its C name and address, for a JIT to resolve
/// the declarations of generated code.
pub fn symbols() -> Vec<(&'static str, usize)> {
    let mut s = Vec::new();
    s.extend_from_slice(&print::SYMBOLS());
    s.extend_from_slice(&memory::SYMBOLS());
    s.extend_from_slice(&cuda::SYMBOLS());
    s.extend_from_slice(&time::SYMBOLS());
    s.extend_from_slice(&random::SYMBOLS());
    s.extend_from_slice(&parallel::SYMBOLS());
    s.extend_from_slice(&thread::SYMBOLS());
    s.extend_from_slice(&blocks::SYMBOLS());
    s.extend_from_slice(&device::SYMBOLS());
    s.extend_from_slice(&error::SYMBOLS());
    s.extend_from_slice(&checks::SYMBOLS());
    s.extend_from_slice(&half::SYMBOLS());
    s.extend_from_slice(&image::SYMBOLS());
    s.extend_from_slice(&anydsl::SYMBOLS());
    s
}

/// Lists `(name, address)` pairs of C-ABI functions, for [`symbols`].
macro_rules! symbol_table {
    ($($f:ident),* $(,)?) => {
        /// This module's functions with their C names and addresses.
        #[allow(non_snake_case)]
        pub fn SYMBOLS() -> Vec<(&'static str, usize)> {
            vec![$((stringify!($f), $f as *const () as usize)),*]
        }
    };
}
pub(crate) use symbol_table;
