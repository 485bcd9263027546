//! Loops marked for vectorization (`vectorize_range`) promise that their iterations do
//! not depend on each other. LLVM's vectorizer otherwise proves that itself, and where a
//! loop reads through an index computed at run time (a lookup table, a gather from a
//! plane chosen per pixel) it cannot bound that access, so it cannot check the loop's
//! pointers against each other at run time and leaves the loop scalar ("cannot identify
//! array bounds"). The promise is told to LLVM as `llvm.loop.parallel_accesses`: each
//! memory access of the loop carries an access group that the loop's metadata names.
//!
//! Accesses to the function's stack frame are left out: a variable of the loop's body
//! lives in one `alloca` for all iterations, so its accesses do depend on each other
//! across iterations. A loop with such an access is then not parallel for LLVM (every
//! access must carry the group), and the vectorizer proves what it can, as before.

use inkwell::basic_block::BasicBlock;
use inkwell::values::{FunctionValue, InstructionOpcode, InstructionValue, MetadataValue, Operand};
use rustc_hash::{FxHashMap, FxHashSet};

/// Marks the memory accesses of each loop of `func`, given by its back edge's source
/// (`latch`) and its header, with the access group `group` (which the loops' metadata
/// names as parallel).
pub(crate) fn mark_accesses<'ctx>(
    func: FunctionValue<'ctx>,
    loops: &[(BasicBlock<'ctx>, BasicBlock<'ctx>)],
    group: MetadataValue<'ctx>,
    kind: u32,
) {
    if loops.is_empty() {
        return;
    }
    let preds = predecessors(func);
    let mut marked = FxHashSet::default();
    for &(latch, header) in loops {
        for bb in natural_loop(&preds, latch, header) {
            if !marked.insert(bb) {
                continue;
            }
            let mut at = bb.get_first_instruction();
            while let Some(i) = at {
                if accesses_memory_off_the_stack(i) {
                    // Setting metadata on a load, store or call cannot fail.
                    let _ = i.set_metadata(group, kind);
                }
                at = i.get_next_instruction();
            }
        }
    }
}

/// The predecessors of each block of `func`.
fn predecessors<'ctx>(
    func: FunctionValue<'ctx>,
) -> FxHashMap<BasicBlock<'ctx>, Vec<BasicBlock<'ctx>>> {
    let mut preds: FxHashMap<BasicBlock<'ctx>, Vec<BasicBlock<'ctx>>> = FxHashMap::default();
    for bb in func.get_basic_block_iter() {
        let Some(t) = bb.get_terminator() else {
            continue;
        };
        for i in 0..t.get_num_operands() {
            if let Some(Operand::Block(s)) = t.get_operand(i) {
                preds.entry(s).or_default().push(bb);
            }
        }
    }
    preds
}

/// The blocks of the loop with back edge latch -> header: the header and every block
/// that reaches the latch without passing through the header.
fn natural_loop<'ctx>(
    preds: &FxHashMap<BasicBlock<'ctx>, Vec<BasicBlock<'ctx>>>,
    latch: BasicBlock<'ctx>,
    header: BasicBlock<'ctx>,
) -> Vec<BasicBlock<'ctx>> {
    let mut seen: FxHashSet<BasicBlock<'ctx>> = [header].into_iter().collect();
    let mut stack = vec![latch];
    while let Some(b) = stack.pop() {
        if seen.insert(b) {
            stack.extend(preds.get(&b).into_iter().flatten().copied());
        }
    }
    seen.into_iter().collect()
}

/// Whether `i` is a load, a store or a call none of whose pointers is into the stack
/// frame (an `alloca`, through address arithmetic). Atomics stay unmarked: they are how
/// iterations meet.
fn accesses_memory_off_the_stack(i: InstructionValue) -> bool {
    let pointers = match i.get_opcode() {
        InstructionOpcode::Load | InstructionOpcode::Store => {
            if i.get_atomic_ordering()
                .is_ok_and(|o| o != inkwell::AtomicOrdering::NotAtomic)
            {
                return false;
            }
            // The address: a load's only operand, a store's second.
            let at = (i.get_opcode() == InstructionOpcode::Store) as u32;
            at..at + 1
        }
        InstructionOpcode::Call => 0..i.get_num_operands(),
        _ => return false,
    };
    pointers.into_iter().all(|n| match i.get_operand(n) {
        Some(Operand::Value(v)) if v.is_pointer_value() => !on_the_stack(v.into_pointer_value()),
        _ => true,
    })
}

/// Whether `p` may be an `alloca` or an address computed from one: through address
/// arithmetic, and through every pointer a phi or a select may choose.
fn on_the_stack(p: inkwell::values::PointerValue) -> bool {
    let mut seen = FxHashSet::default();
    let mut todo = vec![p];
    while let Some(p) = todo.pop() {
        let Some(i) = p.as_instruction() else {
            continue;
        };
        if !seen.insert(i) {
            continue;
        }
        let pointer = |n: u32| match i.get_operand(n) {
            Some(Operand::Value(v)) if v.is_pointer_value() => Some(v.into_pointer_value()),
            _ => None,
        };
        match i.get_opcode() {
            InstructionOpcode::Alloca => return true,
            InstructionOpcode::GetElementPtr
            | InstructionOpcode::BitCast
            | InstructionOpcode::AddrSpaceCast => todo.extend(pointer(0)),
            InstructionOpcode::Phi => todo.extend((0..i.get_num_operands()).filter_map(pointer)),
            InstructionOpcode::Select => todo.extend([1, 2].into_iter().filter_map(pointer)),
            _ => {}
        }
    }
    false
}
