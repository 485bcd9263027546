//! durin's runtime (not implemented yet).
//!
//! It will own the C-ABI functions that generated code calls: memory, printing, time,
//! images, the CPU `parallel`, and the CUDA platform through cudarc (context, memory, module
//! cache, launch). It will depend on no compiler crate, so that compiled programs can link
//! it alone.
