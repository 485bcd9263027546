//! durin's CUDA back end: kernels as readable CUDA C.
//!
//! It takes a device program in control-flow form: a world whose externals are the kernels
//! (closed continuations `cn(mem, params.., cn(mem))` made by kernel outlining, after
//! closure elimination) and the imports they call. Every kernel becomes an
//! `extern "C" __global__` function, every other function it calls a `__device__` one,
//! and every import a call of the CUDA function of that name (a name with a `.`, such as
//! `threadIdx.x`, is a variable). [`emit`] explains the translation. The text is compiled
//! by NVRTC at run time (or by `durin build --emit ptx`); this crate compiles nothing.

pub mod emit;
pub mod types;

pub use emit::{emit, Kernel};

use durin_ir::Loc;

/// An error of the back end, with the source place of the construct when known.
#[derive(Clone, Debug)]
pub struct Error {
    /// What went wrong.
    pub message: String,
    /// Where, in the source.
    pub loc: Option<Loc>,
}

impl Error {
    /// A construct that kernels cannot contain.
    pub fn unsupported(what: impl Into<String>) -> Error {
        Error {
            message: format!("not supported in a GPU kernel: {}", what.into()),
            loc: None,
        }
    }

    /// A broken invariant of the back end's input or of the back end itself.
    pub fn internal(what: impl Into<String>) -> Error {
        Error {
            message: format!("internal error in the CUDA back end: {}", what.into()),
            loc: None,
        }
    }

    /// This error at `loc`, unless it already has a place.
    pub fn at(mut self, loc: Option<Loc>) -> Error {
        if self.loc.is_none() {
            self.loc = loc;
        }
        self
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}
