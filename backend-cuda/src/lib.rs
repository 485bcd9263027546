//! durin's CUDA back end (not implemented yet).
//!
//! It will own the translation of kernel IR to readable CUDA C and a helper that compiles it
//! with NVRTC. It will launch nothing; launching belongs to `durin-runtime`.
