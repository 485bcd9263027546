//! The stdlib's memory hints (`stdlib/core.art`): `durin_aligned`, `durin_assume_aligned`,
//! `durin_store_stream_f32`, `durin_store_fence` and `durin_prefetch` become instructions,
//! not calls.
//!
//! A streaming (non-temporal) store must survive LLVM's loop vectorizer, which refuses to
//! vectorize a loop whose scalar store carries `!nontemporal` at less than vector alignment
//! (the alignment it will only know after vectorization, from the library's `assume`s).
//! So a streaming store is lowered as a plain store marked with an alias scope of its own,
//! `!alias.scope` being metadata the vectorizer keeps on the vector store it makes (no
//! access claims `!noalias` with that scope, so the marker says nothing about aliasing);
//! after optimization, [`mark_streaming_stores`] turns the marked stores into
//! `!nontemporal` ones, which code generation emits as `movnt*` where they are aligned.

use inkwell::context::Context;
use inkwell::llvm_sys::{core, debuginfo};
use inkwell::module::Module;
use inkwell::values::{AsValueRef, InstructionOpcode, MetadataValue};

/// The named metadata that holds the scope list marking streaming stores.
const STREAM_MARKER: &str = "durin.stream";

/// The names of the hints (imports the back end turns into instructions).
pub use durin_ir::analysis::program::MEMORY_HINTS as HINTS;

/// The `!alias.scope` list that marks streaming stores in `module`, made on first use:
/// `!{!scope}` with `!scope = !{!scope, !domain}` and `!domain = !{!domain, !"durin.stream"}`
/// (self-referential, so neither is merged with another node).
pub fn stream_marker<'ctx>(ctx: &'ctx Context, module: &Module<'ctx>) -> MetadataValue<'ctx> {
    if let Some(&m) = module.get_global_metadata(STREAM_MARKER).first() {
        return m;
    }
    let raw = ctx.raw();
    // SAFETY: plain LLVM C API calls on live objects of this context; each temporary node
    // is replaced by the node that refers to it (the self-reference LLVM's scopes have).
    let list = unsafe {
        let self_ref = |rest: &mut Vec<inkwell::llvm_sys::prelude::LLVMMetadataRef>| {
            let tmp = debuginfo::LLVMTemporaryMDNode(raw, std::ptr::null_mut(), 0);
            rest.insert(0, tmp);
            let node = core::LLVMMDNodeInContext2(raw, rest.as_mut_ptr(), rest.len());
            debuginfo::LLVMMetadataReplaceAllUsesWith(tmp, node);
            node
        };
        let name =
            core::LLVMMDStringInContext2(raw, STREAM_MARKER.as_ptr().cast(), STREAM_MARKER.len());
        let domain = self_ref(&mut vec![name]);
        let scope = self_ref(&mut vec![domain]);
        let mut ops = [scope];
        let list = core::LLVMMDNodeInContext2(raw, ops.as_mut_ptr(), 1);
        MetadataValue::new(core::LLVMMetadataAsValue(raw, list))
    };
    // `add_global_metadata` fails only for a value that is not a node.
    let _ = module.add_global_metadata(STREAM_MARKER, &list);
    list
}

/// Turns the stores marked by [`stream_marker`] into `!nontemporal` stores (and drops the
/// marker). Runs after optimization.
pub fn mark_streaming_stores(ctx: &Context, module: &Module) {
    let Some(&marker) = module.get_global_metadata(STREAM_MARKER).first() else {
        return;
    };
    let scope = ctx.get_kind_id("alias.scope");
    let nontemporal = ctx.get_kind_id("nontemporal");
    let one = ctx.metadata_node(&[ctx.i32_type().const_int(1, false).into()]);
    for f in module.get_functions() {
        for bb in f.get_basic_blocks() {
            let mut next = bb.get_first_instruction();
            while let Some(inst) = next {
                next = inst.get_next_instruction();
                if inst.get_opcode() == InstructionOpcode::Store
                    && inst.get_metadata(scope) == Some(marker)
                {
                    // Setting metadata fails only for a value that is not a node.
                    let _ = inst.set_metadata(one, nontemporal);
                    // SAFETY: removes the marker from a live instruction of this module.
                    unsafe {
                        core::LLVMSetMetadata(inst.as_value_ref(), scope, std::ptr::null_mut())
                    };
                }
            }
        }
    }
}
