//! The kernel-launch intrinsic ([`Node::Launch`]): its type and the named arguments of a
//! jump to it.
//!
//! A launch is a jump `launch(mem, device, grid, block, kernel, captured.., return)`:
//! `grid` counts threads (not blocks) in x, y and z, as AnyDSL's `exec` does, `block` is the
//! block size, and `kernel` is a continuation `cn(mem, captured types.., cn(mem))` that every
//! thread runs. The frontend makes launches with a kernel that still has free values and no
//! captured arguments; kernel outlining closes the kernel over what it captures.

use crate::{Def, Node, Type, TypeKind, World};

/// The runtime function a CUDA launch becomes (the pass `kernels`).
pub const CUDA_LAUNCH_FN: &str = "durin_cuda_launch";

/// The runtime function a launch of CUDA's kernels on the CPU's cores becomes
/// (`--target cuda-cpu`).
pub const CPU_BLOCKS_LAUNCH_FN: &str = "durin_cpu_launch_cuda";

/// The runtime's launch functions: a call of one is never worth copying (host code does
/// not run faster with a loop around a launch unrolled), and the LLVM back end says so.
pub const LAUNCH_FNS: [&str; 2] = [CUDA_LAUNCH_FN, CPU_BLOCKS_LAUNCH_FN];

/// The arguments of a jump to the launch intrinsic, by name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    /// The continuation whose body is the launch.
    pub at: Def,
    /// The launch intrinsic itself (the callee).
    pub callee: Def,
    /// The memory token.
    pub mem: Def,
    /// The device number (`i32`).
    pub device: Def,
    /// Threads in x, y and z (`(i32, i32, i32)`).
    pub grid: Def,
    /// Threads per block in x, y and z (`(i32, i32, i32)`).
    pub block: Def,
    /// The code every thread runs.
    pub kernel: Def,
    /// The values passed to the kernel, after its `mem`.
    pub captured: Vec<Def>,
    /// Where the host continues.
    pub ret: Def,
}

impl Launch {
    /// The launch that `k`'s body is, if it is one.
    pub fn of(w: &World, k: Def) -> Option<Launch> {
        let (callee, args) = w.body(k)?;
        if !matches!(w.node(callee), Node::Launch) || args.len() < 6 {
            return None;
        }
        Some(Launch {
            at: k,
            callee,
            mem: args[0],
            device: args[1],
            grid: args[2],
            block: args[3],
            kernel: args[4],
            captured: args[5..args.len() - 1].to_vec(),
            ret: args[args.len() - 1],
        })
    }

    /// The argument list of the jump, in order.
    pub fn args(&self) -> Vec<Def> {
        let mut args = vec![self.mem, self.device, self.grid, self.block, self.kernel];
        args.extend(&self.captured);
        args.push(self.ret);
        args
    }
}

/// The type of the kernel that a launch passing values of types `captured` runs:
/// `cn(mem, captured.., cn(mem))`.
pub fn kernel_type(w: &mut World, captured: &[Type]) -> Type {
    let mem = w.ty_mem();
    let ret = w.ty_cont(&[mem]);
    let mut ps = vec![mem];
    ps.extend_from_slice(captured);
    ps.push(ret);
    w.ty_cont(&ps)
}

/// The type of the launch intrinsic for kernels taking `captured`.
pub fn launch_type(w: &mut World, captured: &[Type]) -> Type {
    let mem = w.ty_mem();
    let i32t = w.ty_int(32, true);
    let dim = w.ty_tuple(&[i32t, i32t, i32t]);
    let kernel = kernel_type(w, captured);
    let ret = w.ty_cont(&[mem]);
    let mut ps = vec![mem, i32t, dim, dim, kernel];
    ps.extend_from_slice(captured);
    ps.push(ret);
    w.ty_cont(&ps)
}

/// Checks that `t` is the type of a launch intrinsic.
pub fn check_type(w: &mut World, t: Type) -> Result<(), String> {
    let shape =
        "cn(mem, i32, (i32, i32, i32), (i32, i32, i32), cn(mem, T.., cn(mem)), T.., cn(mem))";
    let ps = match w.kind(t) {
        TypeKind::Cont(ps) if ps.len() >= 6 => ps.clone(),
        _ => return Err(format!("a launch has a type of the form {shape}")),
    };
    let captured = &ps[5..ps.len() - 1];
    if launch_type(w, captured) != t {
        return Err(format!("a launch has a type of the form {shape}"));
    }
    Ok(())
}

/// A kernel of a device world and what the host knows about its launches: what a device
/// code generator needs besides the kernel's code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kernel {
    /// The kernel: an external continuation `cn(mem, params.., cn(mem))` of the device
    /// world.
    pub def: Def,
    /// For each value parameter (after `mem`, in order): whether the launch shows this
    /// pointer unaliased by every other pointer the kernel gets.
    pub restrict: Vec<bool>,
    /// The block size, when the launch uses a constant one.
    pub block: Option<[u32; 3]>,
}
