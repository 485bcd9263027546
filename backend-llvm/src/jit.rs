//! The JIT: LLVM's ORC JIT links an object file (the one `--emit obj` would write, made in
//! parts on two threads for a module optimized in parts) into this process's memory.
//!
//! The runtime's functions are defined at the addresses the caller gives (the `durin`
//! executable does not export its symbols), everything else (the C library) is looked up
//! in the process.

use crate::{internal, Result};
use durin_diag::Diagnostic;
use inkwell::llvm_sys::error::{LLVMDisposeErrorMessage, LLVMErrorRef, LLVMGetErrorMessage};
use inkwell::llvm_sys::orc2::lljit::{
    LLVMOrcCreateLLJIT, LLVMOrcCreateLLJITBuilder, LLVMOrcDisposeLLJIT, LLVMOrcLLJITAddObjectFile,
    LLVMOrcLLJITGetExecutionSession, LLVMOrcLLJITGetGlobalPrefix, LLVMOrcLLJITGetMainJITDylib,
    LLVMOrcLLJITLookup, LLVMOrcLLJITMangleAndIntern, LLVMOrcLLJITRef,
};
use inkwell::llvm_sys::orc2::{
    LLVMJITEvaluatedSymbol, LLVMJITSymbolFlags, LLVMJITSymbolGenericFlags, LLVMOrcAbsoluteSymbols,
    LLVMOrcCSymbolMapPair, LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess,
    LLVMOrcDisposeMaterializationUnit, LLVMOrcExecutionSessionSetErrorReporter,
    LLVMOrcJITDylibAddGenerator, LLVMOrcJITDylibDefine,
};
use std::ffi::{CStr, CString};
use std::sync::Mutex;

/// An ORC JIT holding one linked object.
pub(crate) struct Engine {
    jit: LLVMOrcLLJITRef,
    /// What the JIT reported while it linked (a symbol nothing defines, say), for the
    /// error of the lookup that made it link. Boxed, so that its address stays; dropped
    /// after the JIT (`Drop` disposes of the JIT, then the fields go).
    reported: Box<Mutex<Vec<String>>>,
}

/// Keeps the message of an error the JIT reports outside a call that returns it.
extern "C" fn report(ctx: *mut std::ffi::c_void, e: LLVMErrorRef) {
    if let Some(text) = take(e) {
        // SAFETY: `ctx` is the engine's `reported`, alive as long as the JIT.
        let reported = unsafe { &*(ctx as *const Mutex<Vec<String>>) };
        if let Ok(mut r) = reported.lock() {
            r.push(text);
        }
    }
}

/// The message of an LLVM error (consumed), or `None` for success.
fn take(e: LLVMErrorRef) -> Option<String> {
    if e.is_null() {
        return None;
    }
    // SAFETY: a failure LLVM returned; getting its message consumes it, and the message is
    // freed once here.
    unsafe {
        let m = LLVMGetErrorMessage(e);
        let text = CStr::from_ptr(m).to_string_lossy().into_owned();
        LLVMDisposeErrorMessage(m);
        Some(text)
    }
}

fn failed(what: &str, message: String) -> Diagnostic {
    internal(format!("the JIT {what}: {message}"))
}

impl Engine {
    /// A JIT with `object` (an ELF relocatable object for this machine) linked in, its
    /// undefined symbols resolved from `symbols` (name, address) and then from the process.
    pub(crate) fn load(object: &[u8], symbols: &[(&str, usize)]) -> Result<Engine> {
        let mut jit = std::ptr::null_mut();
        // SAFETY: LLVM takes the builder over, also when it fails.
        if let Some(e) = take(unsafe { LLVMOrcCreateLLJIT(&mut jit, LLVMOrcCreateLLJITBuilder()) })
        {
            return Err(failed("cannot be made", e));
        }
        // Disposed of on every path from here on.
        let engine = Engine {
            jit,
            reported: Box::default(),
        };
        let reported: *const Mutex<Vec<String>> = &*engine.reported;
        // SAFETY: the reporter's context lives as long as the JIT.
        unsafe {
            LLVMOrcExecutionSessionSetErrorReporter(
                LLVMOrcLLJITGetExecutionSession(jit),
                report,
                reported.cast_mut().cast(),
            )
        };
        let names: Vec<CString> = (symbols.iter())
            .map(|(n, _)| {
                CString::new(*n).map_err(|_| internal("a runtime symbol's name holds NUL"))
            })
            .collect::<Result<_>>()?;
        // SAFETY: calls on the live JIT; each name is interned (retained) for the pair that
        // the materialization unit takes over; the unit is disposed of by LLVM when it is
        // defined, here when it is not.
        unsafe {
            let dylib = LLVMOrcLLJITGetMainJITDylib(jit);
            let mut pairs: Vec<LLVMOrcCSymbolMapPair> = (names.iter().zip(symbols))
                .map(|(name, &(_, address))| LLVMOrcCSymbolMapPair {
                    Name: LLVMOrcLLJITMangleAndIntern(jit, name.as_ptr()),
                    Sym: LLVMJITEvaluatedSymbol {
                        Address: address as u64,
                        Flags: LLVMJITSymbolFlags {
                            GenericFlags:
                                LLVMJITSymbolGenericFlags::LLVMJITSymbolGenericFlagsExported as u8,
                            TargetFlags: 0,
                        },
                    },
                })
                .collect();
            if !pairs.is_empty() {
                let unit = LLVMOrcAbsoluteSymbols(pairs.as_mut_ptr(), pairs.len());
                if let Some(e) = take(LLVMOrcJITDylibDefine(dylib, unit)) {
                    LLVMOrcDisposeMaterializationUnit(unit);
                    return Err(failed("cannot define the runtime's functions", e));
                }
            }
            let mut generator = std::ptr::null_mut();
            let prefix = LLVMOrcLLJITGetGlobalPrefix(jit);
            let e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
                &mut generator,
                prefix,
                None,
                std::ptr::null_mut(),
            );
            if let Some(e) = take(e) {
                return Err(failed("cannot search the process's symbols", e));
            }
            LLVMOrcJITDylibAddGenerator(dylib, generator);
            let buffer = inkwell::llvm_sys::core::LLVMCreateMemoryBufferWithMemoryRangeCopy(
                object.as_ptr().cast(),
                object.len(),
                c"durin".as_ptr(),
            );
            // The JIT takes the buffer over.
            if let Some(e) = take(LLVMOrcLLJITAddObjectFile(jit, dylib, buffer)) {
                return Err(failed("cannot take the object code", e));
            }
        }
        Ok(engine)
    }

    /// The address of the external symbol `name` (linking the object on first use).
    pub(crate) fn lookup(&self, name: &str) -> Result<usize> {
        let missing = || Diagnostic::error_at(None, format!("the JIT has no function `{name}`"));
        let c = CString::new(name).map_err(|_| missing())?;
        let mut address = 0;
        // SAFETY: a live JIT and a NUL-terminated name.
        match take(unsafe { LLVMOrcLLJITLookup(self.jit, &mut address, c.as_ptr()) }) {
            None if address != 0 => Ok(address as usize),
            None => Err(missing()),
            Some(e) if e == format!("Symbols not found: [ {name} ]") => Err(missing()),
            // What the object refers to and nothing defines, say: the reported causes
            // before the lookup's own message ("Failed to materialize symbols").
            Some(e) => {
                let mut causes = (self.reported.lock())
                    .map(|r| r.join("; "))
                    .unwrap_or_default();
                if causes.is_empty() {
                    causes = e;
                }
                if causes.contains("Symbols not found") {
                    causes += " (neither durin's runtime nor this process defines them)";
                }
                Err(Diagnostic::error_at(
                    None,
                    format!("the JIT cannot link the program: {causes}"),
                ))
            }
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        // SAFETY: the JIT was made by `load` and is disposed of once, with the code it holds.
        let _ = take(unsafe { LLVMOrcDisposeLLJIT(self.jit) });
    }
}
