//! The x86 target only.
//!
//! LLVM's C header defines its "initialize all targets" and "initialize the native target"
//! helpers inline; `llvm-sys` compiles them into one object file, which refers to the
//! initializers of every target LLVM was built with (AArch64, AMDGPU, RISC-V, ...). inkwell
//! calls them from code that is linked whether or not it runs, so that object and every
//! target's libraries came with it: most of the executable, and their static constructors
//! (command-line options, registries) ran at every start of `durin`.
//!
//! durin generates x86-64 code only (its kernels are CUDA C). These definitions take the
//! helpers' place, so the linker never needs that object: each initializes x86 alone.
//! docs/src/decisions.md has the figures.

use inkwell::llvm_sys::target as t;

/// Each helper `name`, defined as the x86 initializer `init`.
macro_rules! x86_only {
    ($($(#[$doc:meta])* $name:ident => $init:ident;)*) => {$(
        $(#[$doc])*
        #[no_mangle]
        pub extern "C" fn $name() {
            // SAFETY: LLVM's initializers take no arguments and may run more than once.
            unsafe { t::$init() }
        }
    )*};
}

x86_only! {
    /// Only the x86 target's information.
    LLVM_InitializeAllTargetInfos => LLVMInitializeX86TargetInfo;
    /// Only the x86 target.
    LLVM_InitializeAllTargets => LLVMInitializeX86Target;
    /// Only the x86 target's machine-code layer.
    LLVM_InitializeAllTargetMCs => LLVMInitializeX86TargetMC;
    /// Only the x86 assembly printer.
    LLVM_InitializeAllAsmPrinters => LLVMInitializeX86AsmPrinter;
    /// Only the x86 assembly parser.
    LLVM_InitializeAllAsmParsers => LLVMInitializeX86AsmParser;
    /// Only the x86 disassembler.
    LLVM_InitializeAllDisassemblers => LLVMInitializeX86Disassembler;
}

/// The native target, which durin supports on x86-64 only; 0 is success.
#[no_mangle]
pub extern "C" fn LLVM_InitializeNativeTarget() -> i32 {
    LLVM_InitializeAllTargetInfos();
    LLVM_InitializeAllTargets();
    LLVM_InitializeAllTargetMCs();
    0
}

/// The native assembly parser; 0 is success.
#[no_mangle]
pub extern "C" fn LLVM_InitializeNativeAsmParser() -> i32 {
    LLVM_InitializeAllAsmParsers();
    0
}

/// The native assembly printer; 0 is success.
#[no_mangle]
pub extern "C" fn LLVM_InitializeNativeAsmPrinter() -> i32 {
    LLVM_InitializeAllAsmPrinters();
    0
}

/// The native disassembler; 0 is success.
#[no_mangle]
pub extern "C" fn LLVM_InitializeNativeDisassembler() -> i32 {
    LLVM_InitializeAllDisassemblers();
    0
}
