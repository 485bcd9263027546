//! The CUDA back end as the passes' device code generator, and PTX through NVRTC.

use crate::error;
use durin_diag::Diagnostic;
use durin_ir::{Kernel, World};
use durin_passes::{DeviceCodegen, DeviceModule};

/// Writes kernels as CUDA C with `durin-backend-cuda`, and keeps the module's text (for
/// `--emit cuda|ptx`).
#[derive(Default)]
pub(crate) struct Codegen {
    /// The text of the last module made.
    pub module: Option<String>,
}

impl DeviceCodegen for Codegen {
    fn compile(&mut self, device: &World, kernels: &[Kernel]) -> Result<DeviceModule, Diagnostic> {
        let m = durin_backend_cuda::emit(device, kernels)?;
        self.module = Some(m.source.clone());
        Ok(DeviceModule {
            source: m.source,
            kernel_names: m.kernel_names,
        })
    }
}

/// The PTX of CUDA C `source` for GPU architecture `arch` (`sm_XY`).
pub(crate) fn ptx(source: &str, arch: &str) -> Result<Vec<u8>, Diagnostic> {
    durin_runtime::cuda::nvrtc::compile(source, arch, false).map_err(error)
}
