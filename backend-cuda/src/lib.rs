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

pub use durin_ir::Kernel;
pub use emit::{emit, CudaModule};

pub use durin_diag::Diagnostic;

/// A construct the back end does not translate (an error without a place; callers add
/// the place with [`Diagnostic::at`]).
pub(crate) fn unsupported(what: impl Into<String>) -> Diagnostic {
    Diagnostic::unsupported("in a GPU kernel", what)
}

/// A broken invariant of the back end's input or of the back end itself.
pub(crate) fn internal(what: impl Into<String>) -> Diagnostic {
    Diagnostic::internal("the CUDA back end", what)
}
