//! The GPU subsystem: what the passes know of kernels and their launches, and the two passes
//! that change them.
//!
//! Analyses (they read a world and never change it; none imports a pass):
//!
//! - [`target`]: where launches go ([`target::Target`]) and the seam to a device code
//!   generator ([`target::DeviceCodegen`]);
//! - [`launch`]: launch facts: a launch's place, constant block shape, the allocations
//!   its pointers come from and how far each reaches;
//! - [`affine`]: the one affine algebra (polynomials over thread, block and uniform
//!   values), for footprints and for staging's comparison of address computations;
//! - [`footprint`]: each load's index as such a polynomial, and the box a block reads;
//! - [`buffers`]: read-only tracing of a kernel's pointer parameters, with footprints;
//! - [`paths`]: the jumps and branches between a kernel's continuations, and the
//!   condition under which a thread reaches one, written as a value;
//! - [`model`]: the cost model of staging, and the decision recorded for each buffer.
//!
//! Passes (they import the analyses, never each other's helpers):
//!
//! - [`stage`]: the pass `stage`, shared-memory staging;
//! - [`kernels`]: the pass `kernels`, launch lowering, with [`cpu_blocks`], the mapping of
//!   a GPU's blocks and threads onto the CPU's cores (`--target cuda-cpu`).

pub(crate) mod affine;
pub(crate) mod buffers;
pub(crate) mod cpu_blocks;
pub(crate) mod footprint;
pub(crate) mod kernels;
pub(crate) mod launch;
pub(crate) mod model;
pub(crate) mod paths;
pub(crate) mod stage;
pub(crate) mod target;
