//! Where kernel launches go: the target the passes compile launches for, and the seam
//! through which a device code generator (the CUDA back end, which the driver gives) turns
//! kernels into a module without this crate depending on it.

use durin_diag::Diagnostic;
use durin_ir::{Kernel, World};

/// The runtime function a launch calls.
pub const LAUNCH_FN: &str = durin_ir::launch::CUDA_LAUNCH_FN;

/// Where kernel launches go.
pub enum Target<'a> {
    /// The CPU: a kernel launch left after outlining is an error, which says why the
    /// target is the CPU.
    Cpu {
        /// Why (for the message).
        why: String,
    },
    /// CUDA: the kernels go to this code generator.
    Cuda(&'a mut dyn DeviceCodegen),
    /// CUDA's kernels run on the CPU's cores, with a GPU's blocks (see [`crate::gpu::cpu_blocks`]).
    CpuBlocks,
}

impl Default for Target<'_> {
    fn default() -> Self {
        Target::Cpu {
            why: "no device code generator was given to the passes".into(),
        }
    }
}

/// A device code generator: the driver gives one (the CUDA back end) so that this crate
/// depends on none.
pub trait DeviceCodegen {
    /// The module of the kernels `kernels` of `device`, a first-order world whose externals
    /// are those kernels.
    fn compile(&mut self, device: &World, kernels: &[Kernel]) -> Result<DeviceModule, Diagnostic>;
}

/// What a device code generator makes of a world's kernels.
#[derive(Clone, Debug)]
pub struct DeviceModule {
    /// The module's source text (compiled at run time).
    pub source: String,
    /// The name of each kernel in the module, in the order they were given.
    pub kernel_names: Vec<String>,
}
