//! First-order IR to Cranelift IR, one function at a time.
//!
//! As in the LLVM back end, each top-level continuation with a body becomes a function,
//! the continuations of its scope become blocks whose parameters are block parameters, its
//! return point becomes `return`, and a jump to another top-level continuation (or through
//! a function pointer) is a call followed by a jump to the return point it was given. Values
//! are lists of scalars (see [`crate::types`]): a tuple parameter is several block
//! parameters, a tuple result several return values.
//!
//! Defs are placed by the late schedule. A def that depends on no parameter is computed in
//! the block that first needs it, once per block (Cranelift's optimizer merges the copies at
//! `-O1` and above); a division that may trap is thus computed only on the path that divides.
//!
//! Run-time semantics follow `durin_ir::semantics`, as the interpreter's and LLVM's do:
//! shifts take their amount modulo the width, `MIN / -1` wraps, float-to-int conversions
//! saturate (NaN gives 0), integer division by zero calls `durin_runtime_error`. `f16`
//! values are their bits; arithmetic on them is done in `f32` through the runtime's
//! `durin_f16_to_f32`/`durin_f32_to_f16`, each rounding once.

use crate::types::{int_type, Shape, Types};
use crate::Timings;
use crate::{internal, unsupported};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::immediates::{Ieee32, Ieee64};
use cranelift_codegen::ir::{
    types as cl, AbiParam, Block, BlockArg, FuncRef, InstBuilder, MemFlagsData, StackSlotData,
    StackSlotKind, TrapCode, Value,
};
use cranelift_codegen::isa::CallConv;
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::JITModule;
use cranelift_module::{DataDescription, DataId, FuncId, Linkage, Module};
use durin_diag::{Diagnostic, SourceMap};
use durin_ir::analysis::cfg::{Cfg, DomTree};
use durin_ir::analysis::program::{self, array_indices, param_types, Operand, Program, Signature};
use durin_ir::analysis::schedule::{Placement, Schedule};
use durin_ir::semantics::Prim;
use durin_ir::{ArithOp, CmpOp, Def, Node, Type, TypeKind, World};
use rustc_hash::{FxHashMap, FxHashSet};
use smallvec::{smallvec, SmallVec};
use std::rc::Rc;
use std::time::Instant;

/// A value: its scalars (none for `mem`).
type V = SmallVec<[Value; 2]>;

type R<T> = Result<T, Diagnostic>;

/// The C math functions that are one Cranelift instruction.
const MATH_INSTRUCTIONS: &[&str] = &["sqrt", "fabs", "floor", "ceil"];

/// Translates the program of `w` into `module` and returns the id of the external function
/// `entry`, with the time spent translating and compiling.
pub fn lower(
    module: &mut JITModule,
    w: &World,
    entry: &str,
    (bounds_checks, places): (Option<&SourceMap>, Option<&SourceMap>),
) -> R<(FuncId, Timings)> {
    let t = Instant::now();
    let program = program::collect(w);
    let mut m = ModuleLowering {
        w,
        module,
        types: Types::default(),
        program: &program,
        functions: FxHashMap::default(),
        globals: FxHashMap::default(),
        helpers: FxHashMap::default(),
        messages: FxHashMap::default(),
        timings: Timings::default(),
        bounds_checks,
        places,
    };
    m.declare()?;
    for &g in &program.globals {
        let id = m
            .module
            .declare_anonymous_data(matches!(w.node(g), Node::Global { mutable: true }), false)
            .map_err(module_error)?;
        m.globals.insert(g, id);
    }
    for &g in &program.globals {
        m.define_global(g).map_err(|e| e.at(w.loc(g)))?;
    }
    let mut ctx = m.module.make_context();
    let mut fctx = FunctionBuilderContext::new();
    for &f in &program.functions {
        m.define_function(f, &mut ctx, &mut fctx)
            .map_err(|e| e.at(w.loc(f)))?;
    }
    let entry_id = program
        .functions
        .iter()
        .find(|&&f| w.is_external(f) && w.name(f) == Some(entry))
        .map(|f| m.functions[f].0)
        .ok_or_else(|| {
            Diagnostic::error_at(None, format!("the program has no function `{entry}`"))
        })?;
    m.timings.lower = t.elapsed().saturating_sub(m.timings.codegen);
    Ok((entry_id, m.timings))
}

fn module_error(e: cranelift_module::ModuleError) -> Diagnostic {
    internal(format!("Cranelift module: {e}"))
}

struct ModuleLowering<'a> {
    w: &'a World,
    module: &'a mut JITModule,
    types: Types,
    program: &'a Program,
    /// Top-level continuations (with or without a body): their ids and signatures.
    functions: FxHashMap<Def, (FuncId, Signature)>,
    globals: FxHashMap<Def, DataId>,
    /// Runtime and C library functions the translation calls by itself.
    helpers: FxHashMap<&'static str, FuncId>,
    /// The run-time error messages and source places, as zero-terminated data.
    messages: FxHashMap<String, DataId>,
    /// Bounds checks, naming places in these sources.
    bounds_checks: Option<&'a SourceMap>,
    /// The sources run-time errors name places in.
    places: Option<&'a SourceMap>,
    timings: Timings,
}

impl<'a> ModuleLowering<'a> {
    /// The Cranelift signature of calling a continuation with signature `sig`: the scalars
    /// of the value parameters in, those of the return point's values out. Small integers
    /// are extended as the C ABI expects.
    fn signature(&mut self, sig: &Signature) -> R<cranelift_codegen::ir::Signature> {
        let w = self.w;
        let mut s = self.module.make_signature();
        for &t in &sig.param_types {
            self.abi(t, &mut s.params)?;
        }
        for t in sig.results(w) {
            self.abi(t, &mut s.returns)?;
        }
        Ok(s)
    }

    fn abi(&mut self, t: Type, out: &mut Vec<AbiParam>) -> R<()> {
        let w = self.w;
        let shape = self.types.shape(w, t)?;
        for &(ty, _) in &shape.leaves {
            let p = AbiParam::new(ty);
            out.push(match w.kind(t) {
                TypeKind::Bool | TypeKind::Int { signed: false, .. } if ty.bits() < 32 => p.uext(),
                TypeKind::Int { signed: true, .. } if ty.bits() < 32 => p.sext(),
                _ => p,
            });
        }
        Ok(())
    }

    /// Declares every function: externals with their names, imports as imports, the rest
    /// anonymous (names may repeat after specialization).
    fn declare(&mut self) -> R<()> {
        let w = self.w;
        let all: Vec<Def> = self
            .program
            .imports
            .iter()
            .chain(&self.program.functions)
            .copied()
            .collect();
        for k in all {
            let name = w.name(k).unwrap_or("fn");
            let sig = Signature::of(w, w.type_of(k)).ok_or_else(|| {
                unsupported(format!(
                    "`{name}` takes a continuation that is not its return point"
                ))
                .at(w.loc(k))
            })?;
            let mut csig = self.signature(&sig).map_err(|e| e.at(w.loc(k)))?;
            if w.body(k).is_some() && !w.is_external(k) && !self.program.address_taken.contains(&k)
            {
                // Only ever called directly: the convention of guaranteed tail calls.
                csig.call_conv = CallConv::Tail;
            }
            let id = if w.body(k).is_none() {
                if csig.returns.len() > 1 {
                    return Err(
                        unsupported(format!("the import `{name}` returns several values"))
                            .at(w.loc(k)),
                    );
                }
                self.module
                    .declare_function(name, Linkage::Import, &csig)
                    .map_err(|_| {
                        unsupported(format!(
                            "the import `{name}` is declared twice with different types"
                        ))
                        .at(w.loc(k))
                    })?
            } else if w.is_external(k) {
                self.module
                    .declare_function(name, Linkage::Export, &csig)
                    .map_err(module_error)?
            } else {
                self.module
                    .declare_anonymous_function(&csig)
                    .map_err(module_error)?
            };
            self.functions.insert(k, (id, sig));
        }
        Ok(())
    }

    /// A runtime or C library function, declared on first use.
    fn helper(&mut self, name: &'static str, params: &[AbiParam], rets: &[AbiParam]) -> R<FuncId> {
        if let Some(&id) = self.helpers.get(name) {
            return Ok(id);
        }
        let mut s = self.module.make_signature();
        s.params.extend_from_slice(params);
        s.returns.extend_from_slice(rets);
        let id = self
            .module
            .declare_function(name, Linkage::Import, &s)
            .map_err(|_| {
                unsupported(format!(
                    "a program that declares `{name}` with another type than the runtime's"
                ))
            })?;
        self.helpers.insert(name, id);
        Ok(id)
    }

    fn define_global(&mut self, g: Def) -> R<()> {
        let w = self.w;
        let init = w.ops(g)[0];
        let shape = self.types.shape(w, w.type_of(init))?;
        let mut desc = DataDescription::new();
        let mut bytes = vec![0u8; shape.size as usize];
        self.constant(init, 0, &mut bytes, &mut desc)?;
        desc.define(bytes.into_boxed_slice());
        desc.set_align(shape.align as u64);
        self.module
            .define_data(self.globals[&g], &desc)
            .map_err(module_error)
    }

    /// Writes the constant `d` (which depends on no parameter) at `at` in a global's bytes.
    fn constant(&mut self, d: Def, at: u32, bytes: &mut [u8], desc: &mut DataDescription) -> R<()> {
        let w = self.w;
        let ty = w.type_of(d);
        let err = |what: &str| unsupported(format!("{what} in a global's initializer"));
        if let Some(a) = w.lit_address(d) {
            bytes[at as usize..at as usize + 8].copy_from_slice(&a.to_le_bytes());
            return Ok(());
        }
        match w.node(d) {
            Node::Lit(bits) => {
                let n = self.types.shape(w, ty)?.size as usize;
                let at = at as usize;
                bytes[at..at + n].copy_from_slice(&bits.to_le_bytes()[..n]);
            }
            Node::Bytes(_) => {
                let b = w.bytes_of(d).unwrap_or_default();
                bytes[at as usize..at as usize + b.len()].copy_from_slice(b);
            }
            Node::Bottom => {}
            Node::Global { .. } => {
                let gv = self.module.declare_data_in_data(self.globals[&d], desc);
                desc.write_data_addr(at, gv, 0);
            }
            Node::Cont => match self.functions.get(&d) {
                Some(&(id, _)) => {
                    let f = self.module.declare_func_in_data(id, desc);
                    desc.write_function_addr(at, f);
                }
                None => return Err(err("a block")),
            },
            Node::Bitcast if matches!(w.kind(ty), TypeKind::Ptr { .. }) => {
                self.constant(w.ops(d)[0], at, bytes, desc)?
            }
            Node::Tuple | Node::Struct | Node::Array => {
                for (i, &o) in w.ops(d).iter().enumerate() {
                    let (_, _, off) = self.types.component(w, ty, i as u64)?;
                    self.constant(o, at + off, bytes, desc)?;
                }
            }
            n => return Err(err(&format!("`{}`", n.name()))),
        }
        Ok(())
    }

    fn define_function(
        &mut self,
        f: Def,
        ctx: &mut Context,
        fctx: &mut FunctionBuilderContext,
    ) -> R<()> {
        let w = self.w;
        let (id, sig) = &self.functions[&f];
        let (id, params) = (*id, sig.params.clone());
        let decl = self.module.declarations().get_function_decl(id);
        ctx.func.signature = decl.signature.clone();
        ctx.func.name = cranelift_codegen::ir::UserFuncName::user(0, id.as_u32());
        let scope = self.program.scope(w, f);
        let cfg = Cfg::compute(w, &scope);
        let dom = DomTree::compute(&cfg);
        let schedule = Schedule::compute(w, &scope, &cfg, &dom, Placement::Late);
        let at_use = program::computed_where_used(w, &schedule, cfg.reverse_post_order());
        let target = self.module.target_config();
        let builder = FunctionBuilder::new(&mut ctx.func, fctx);
        let mut fl = FunctionLowering {
            m: self,
            b: builder,
            entry: f,
            current: f,
            tail_calls: program::may_tail_call(w, &scope),
            blocks: FxHashMap::default(),
            vals: FxHashMap::default(),
            local: FxHashMap::default(),
            funcs: FxHashMap::default(),
            trap_blocks: Vec::new(),
            at: f,
            at_use,
        };
        fl.run(&cfg, &schedule, &params)?;
        fl.b.seal_all_blocks();
        fl.b.finalize(target);
        let t = Instant::now();
        let r = self.module.define_function(id, ctx);
        self.timings.codegen += t.elapsed();
        let r = r.map_err(|e| match e {
            cranelift_module::ModuleError::Compilation(e) => internal(format!(
                "Cranelift rejects the code of `{}`: {}",
                w.name(f).unwrap_or("?"),
                cranelift_codegen::print_errors::pretty_error(&ctx.func, e)
            )),
            e => module_error(e),
        });
        self.module.clear_context(ctx);
        r
    }
}

struct FunctionLowering<'m, 'a, 'f> {
    m: &'m mut ModuleLowering<'a>,
    b: FunctionBuilder<'f>,
    entry: Def,
    /// Whether calls in tail position may be tail calls (see `program::may_tail_call`).
    tail_calls: bool,
    /// The continuation being lowered.
    current: Def,
    /// The Cranelift block of each continuation of the function (its entry included).
    blocks: FxHashMap<Def, Block>,
    /// Values of parameters and of scheduled defs (they dominate their uses).
    vals: FxHashMap<Def, V>,
    /// Values of defs that depend on no parameter, computed in the current block.
    local: FxHashMap<Def, V>,
    funcs: FxHashMap<FuncId, FuncRef>,
    /// The blocks that report an integer division by zero, one per place (in the order
    /// made: the output does not depend on hashing).
    trap_blocks: Vec<(String, Block)>,
    /// The def being computed.
    at: Def,
    /// Defs computed where they are used, in each block that uses them (into `local`):
    /// see [`program::computed_where_used`].
    at_use: FxHashSet<Def>,
}

impl<'m, 'a, 'f> FunctionLowering<'m, 'a, 'f> {
    fn w(&self) -> &'a World {
        self.m.w
    }

    fn shape(&mut self, t: Type) -> R<Rc<Shape>> {
        self.m.types.shape(self.m.w, t)
    }

    fn run(&mut self, cfg: &Cfg, schedule: &Schedule, sig_params: &[usize]) -> R<()> {
        let w = self.w();
        let entry_block = self.b.create_block();
        self.b.append_block_params_for_function_params(entry_block);
        self.blocks.insert(self.entry, entry_block);
        for &k in cfg.reverse_post_order() {
            if k == self.entry || self.m.functions.contains_key(&k) {
                continue;
            }
            let bb = self.b.create_block();
            for (i, t) in param_types(w, k).into_iter().enumerate() {
                let shape = self.shape(t).map_err(|e| e.at(w.loc(k)))?;
                let v: V = shape
                    .leaves
                    .iter()
                    .map(|&(ty, _)| self.b.append_block_param(bb, ty))
                    .collect();
                if let Some(p) = w.param_if_built(k, i) {
                    self.vals.insert(p, v);
                }
            }
            self.blocks.insert(k, bb);
        }
        // The entry's parameters are the function's arguments; `mem` and the return point
        // carry nothing.
        let args = self.b.block_params(entry_block).to_vec();
        let mut next = 0;
        let ptys = param_types(w, self.entry);
        for (i, &t) in ptys.iter().enumerate() {
            let v: V = if sig_params.contains(&i) {
                let n = self.shape(t)?.leaves.len();
                next += n;
                args[next - n..next].iter().copied().collect()
            } else {
                V::new()
            };
            if let Some(p) = w.param_if_built(self.entry, i) {
                self.vals.insert(p, v);
            }
        }
        for &k in cfg.reverse_post_order() {
            if k != self.entry && self.m.functions.contains_key(&k) {
                continue;
            }
            self.b.switch_to_block(self.blocks[&k]);
            self.current = k;
            self.local.clear();
            for d in program::computed_defs(w, schedule.block(k), |o| self.is_block(o)) {
                if !self.vals.contains_key(&d) && !self.at_use.contains(&d) {
                    let v = self.compute(d).map_err(|e| e.at(w.loc(d).or(w.loc(k))))?;
                    self.vals.insert(d, v);
                }
            }
            let (callee, args) = w.body(k).expect("a scheduled continuation has a body");
            let vals = args
                .iter()
                .map(|&a| self.argument(a))
                .collect::<R<Vec<_>>>()
                .map_err(|e| e.at(w.loc(k)))?;
            self.jump(callee, args, &vals).map_err(|e| e.at(w.loc(k)))?;
        }
        for (text, bb) in std::mem::take(&mut self.trap_blocks) {
            self.b.switch_to_block(bb);
            self.runtime_error(&text)?;
        }
        Ok(())
    }

    /// Whether `k` is a block of this function (not a function of its own).
    fn is_block(&self, k: Def) -> bool {
        self.w().node(k) == Node::Cont && !self.m.functions.contains_key(&k)
    }

    /// The Cranelift block of `k`, if `k` is a reachable block of this function.
    fn block_of(&self, k: Def) -> Option<Block> {
        self.blocks.get(&k).copied().filter(|_| self.is_block(k))
    }

    /// The value of `d`: computed before (a parameter or a def placed in a dominating
    /// block) or, when it depends on no parameter, computed now for this block.
    fn value(&mut self, d: Def) -> R<V> {
        if let Some(v) = self.vals.get(&d).or_else(|| self.local.get(&d)) {
            return Ok(v.clone());
        }
        let w = self.w();
        if self.at_use.contains(&d) {
            let v = self.compute(d)?;
            self.local.insert(d, v.clone());
            return Ok(v);
        }
        let v: V = match program::operand(w, d).map_err(internal)? {
            Operand::Global => {
                let gv = self
                    .m
                    .module
                    .declare_data_in_func(self.m.globals[&d], self.b.func);
                smallvec![self.b.ins().symbol_value(cl::I64, gv)]
            }
            Operand::Cont => match self.m.functions.get(&d) {
                Some(&(id, _)) => {
                    let f = self.func_ref(id);
                    smallvec![self.b.ins().func_addr(cl::I64, f)]
                }
                None => return Err(unsupported(program::block_as_value(w, d))),
            },
            Operand::Computed => self.compute(d)?,
        };
        self.local.insert(d, v.clone());
        Ok(v)
    }

    /// The value of a jump's argument: nothing for a block or a parameter passed as a
    /// return point (the jump decides what they mean).
    fn argument(&mut self, a: Def) -> R<V> {
        if program::passes_control(self.w(), a, self.m.functions.contains_key(&a)) {
            Ok(V::new())
        } else {
            self.value(a)
        }
    }

    /// The one scalar of `d`.
    fn scalar(&mut self, d: Def) -> R<Value> {
        match self.value(d)?.as_slice() {
            [v] => Ok(*v),
            _ => Err(internal("expected a scalar")),
        }
    }

    fn prim(&self, t: Type) -> R<Prim> {
        Prim::of(self.w().kind(t)).ok_or_else(|| internal("expected a primitive type"))
    }

    fn func_ref(&mut self, id: FuncId) -> FuncRef {
        if let Some(&f) = self.funcs.get(&id) {
            return f;
        }
        let f = self.m.module.declare_func_in_func(id, self.b.func);
        self.funcs.insert(id, f);
        f
    }

    /// Calls a runtime or C library function with one result.
    fn call_helper(
        &mut self,
        name: &'static str,
        args: &[Value],
        params: &[AbiParam],
        ret: AbiParam,
    ) -> R<Value> {
        let id = self.m.helper(name, params, &[ret])?;
        let f = self.func_ref(id);
        let call = self.b.ins().call(f, args);
        Ok(self.b.inst_results(call)[0])
    }

    fn f16_to_f32(&mut self, x: Value) -> R<Value> {
        self.call_helper(
            "durin_f16_to_f32",
            &[x],
            &[AbiParam::new(cl::I16).uext()],
            AbiParam::new(cl::F32),
        )
    }

    /// Rounds `x` (an `f32` or `f64`) once to the bits of an `f16`.
    fn to_f16(&mut self, x: Value) -> R<Value> {
        let ty = self.b.func.dfg.value_type(x);
        let name = if ty == cl::F32 {
            "durin_f32_to_f16"
        } else {
            "durin_f64_to_f16"
        };
        self.call_helper(name, &[x], &[AbiParam::new(ty)], AbiParam::new(cl::I16))
    }

    /// `x` of primitive `p` as a Cranelift float (`f16` widened to `f32`, exactly).
    fn float(&mut self, p: Prim, x: Value) -> R<Value> {
        match p {
            Prim::Float { bits: 16 } => self.f16_to_f32(x),
            _ => Ok(x),
        }
    }

    /// An index as an `i64` (sign- or zero-extended by its type).
    fn index64(&mut self, d: Def) -> R<Value> {
        let i = self.scalar(d)?;
        let signed = matches!(
            self.prim(self.w().type_of(d))?,
            Prim::Int { signed: true, .. }
        );
        Ok(self.extend(i, cl::I64, signed))
    }

    fn extend(&mut self, x: Value, to: cl::Type, signed: bool) -> Value {
        let from = self.b.func.dfg.value_type(x);
        if from == to {
            x
        } else if from.bits() > to.bits() {
            self.b.ins().ireduce(to, x)
        } else if signed {
            self.b.ins().sextend(to, x)
        } else {
            self.b.ins().uextend(to, x)
        }
    }

    fn literal(&mut self, ty: cl::Type, bits: u64) -> Value {
        match ty {
            cl::F32 => self.b.ins().f32const(Ieee32::with_bits(bits as u32)),
            cl::F64 => self.b.ins().f64const(Ieee64::with_bits(bits)),
            _ => {
                let masked = durin_ir::semantics::mask(ty.bits(), bits);
                self.b.ins().iconst(ty, masked as i64)
            }
        }
    }

    /// A stack slot of `size` bytes aligned to `align`.
    fn slot(&mut self, size: u32, align: u32) -> Value {
        let data = StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            size.max(1),
            align.max(1).trailing_zeros() as u8,
        );
        let s = self.b.create_sized_stack_slot(data);
        self.b.ins().stack_addr(cl::I64, s, 0)
    }

    fn load(&mut self, shape: &Shape, p: Value) -> V {
        shape
            .leaves
            .iter()
            .map(|&(ty, off)| self.b.ins().load(ty, MemFlagsData::new(), p, off as i32))
            .collect()
    }

    fn store(&mut self, shape: &Shape, p: Value, v: &[Value]) {
        for (&(_, off), &x) in shape.leaves.iter().zip(v) {
            self.b.ins().store(MemFlagsData::new(), x, p, off as i32);
        }
    }

    fn compute(&mut self, d: Def) -> R<V> {
        self.at = d;
        let w = self.w();
        let ops: SmallVec<[Def; 4]> = w.ops(d).iter().copied().collect();
        let ty = w.type_of(d);
        if w.types().is_mem(ty) && !matches!(w.node(d), Node::Store) {
            // Extracting or selecting a token: nothing to compute.
            for &o in &ops {
                self.value(o)?;
            }
            return Ok(V::new());
        }
        Ok(match w.node(d) {
            Node::Lit(bits) => {
                let shape = self.shape(ty)?;
                smallvec![self.literal(shape.leaves[0].0, bits)]
            }
            Node::Bytes(_) => {
                let b = w.bytes_of(d).unwrap_or_default();
                (b.iter())
                    .map(|&b| self.literal(cranelift_codegen::ir::types::I8, u64::from(b)))
                    .collect()
            }
            Node::Launch => {
                return Err(internal(
                    "a kernel launch reached the back end (launches are lowered before)",
                ))
            }
            Node::Bottom => {
                let shape = self.shape(ty)?;
                shape
                    .leaves
                    .iter()
                    .map(|&(t, _)| self.literal(t, 0))
                    .collect()
            }
            Node::Param(_) | Node::Cont | Node::Global { .. } => self.value(d)?,
            Node::Arith(op) => smallvec![self.arith(op, ty, ops[0], ops[1])?],
            Node::Cmp(op) => smallvec![self.cmp(op, ops[0], ops[1])?],
            Node::Select => {
                let c = self.scalar(ops[0])?;
                let (x, y) = (self.value(ops[1])?, self.value(ops[2])?);
                x.iter()
                    .zip(&y)
                    .map(|(&x, &y)| self.b.ins().select(c, x, y))
                    .collect()
            }
            Node::Conv => smallvec![self.conv(ops[0], ty)?],
            Node::Bitcast => {
                let x = self.value(ops[0])?;
                let shape = self.shape(ty)?;
                let mut out = V::new();
                for (&x, &(to, _)) in x.iter().zip(&shape.leaves) {
                    out.push(if self.b.func.dfg.value_type(x) == to {
                        x
                    } else {
                        self.b.ins().bitcast(to, MemFlagsData::new(), x)
                    });
                }
                out
            }
            Node::Tuple | Node::Struct | Node::Array => {
                let mut out = V::new();
                for &o in &ops {
                    out.extend(self.value(o)?);
                }
                out
            }
            Node::Extract => {
                let aggty = w.type_of(ops[0]);
                let agg = self.value(ops[0])?;
                match w.lit_bits(ops[1]) {
                    Some(i) => {
                        let (start, n, _) = self.m.types.component(w, aggty, i)?;
                        agg[start..start + n].iter().copied().collect()
                    }
                    None => {
                        let base = self.spill(aggty, &agg)?;
                        let (p, elem) = self.element(base, aggty, ops[1])?;
                        self.load(&elem, p)
                    }
                }
            }
            Node::Insert => {
                let aggty = w.type_of(ops[0]);
                let mut agg = self.value(ops[0])?;
                let x = self.value(ops[2])?;
                match w.lit_bits(ops[1]) {
                    Some(i) => {
                        let (start, n, _) = self.m.types.component(w, aggty, i)?;
                        agg[start..start + n].copy_from_slice(&x);
                        agg
                    }
                    None => {
                        let base = self.spill(aggty, &agg)?;
                        let (p, elem) = self.element(base, aggty, ops[1])?;
                        self.store(&elem, p, &x);
                        let shape = self.shape(aggty)?;
                        self.load(&shape, base)
                    }
                }
            }
            Node::Lea => self.lea(ops[0], ops[1])?,
            Node::Slot => {
                self.value(ops[0])?;
                let shape = self.shape(effect_pointee(w, ty)?)?;
                smallvec![self.slot(shape.size, shape.align)]
            }
            Node::Alloc => {
                self.value(ops[0])?;
                let elem = self.m.types.pointee(w, effect_pointee(w, ty)?)?;
                let n = self.index64(ops[1])?;
                let bytes = self.b.ins().imul_imm_s(n, elem.size as i64);
                // Shared memory in host code: the CPU kernel's block's.
                if program::allocates_shared(w, ty) {
                    return Ok(smallvec![self.call_helper(
                        "durin_cpu_shared",
                        &[bytes],
                        &[AbiParam::new(cl::I64)],
                        AbiParam::new(cl::I64),
                    )?]);
                }
                let dev = self.b.ins().iconst(cl::I32, 0);
                smallvec![self.call_helper(
                    "anydsl_alloc",
                    &[dev, bytes],
                    &[AbiParam::new(cl::I32), AbiParam::new(cl::I64)],
                    AbiParam::new(cl::I64),
                )?]
            }
            Node::Load => {
                self.value(ops[0])?;
                self.check_bounds(ops[1], d)?;
                let p = self.scalar(ops[1])?;
                let t = match w.types().components(ty) {
                    Some(c) if c.len() == 2 => c[1],
                    _ => return Err(internal("ill-typed load")),
                };
                let shape = self.shape(t)?;
                self.load(&shape, p)
            }
            Node::Store => {
                self.value(ops[0])?;
                self.check_bounds(ops[1], d)?;
                let p = self.scalar(ops[1])?;
                let x = self.value(ops[2])?;
                let shape = self.shape(w.type_of(ops[2]))?;
                self.store(&shape, p, &x);
                V::new()
            }
            Node::Known => {
                let known = !w.has_params(ops[0]);
                smallvec![self.b.ins().iconst(cl::I8, known as i64)]
            }
            Node::Run | Node::Hlt => self.value(ops[0])?,
        })
    }
}

/// The pointee of an effect's result type, or an internal error.
fn effect_pointee(w: &World, ty: Type) -> R<Type> {
    program::effect_pointee(w, ty).ok_or_else(|| internal("ill-typed effect"))
}

impl<'m, 'a, 'f> FunctionLowering<'m, 'a, 'f> {
    /// A new stack slot holding the array value `agg` (for a computed index).
    fn spill(&mut self, aggty: Type, agg: &[Value]) -> R<Value> {
        let shape = self.shape(aggty)?;
        let base = self.slot(shape.size, shape.align);
        self.store(&shape, base, agg);
        Ok(base)
    }

    /// The address of element `index` of the array of type `aggty` at `base`.
    fn element(&mut self, base: Value, aggty: Type, index: Def) -> R<(Value, Rc<Shape>)> {
        let w = self.w();
        let TypeKind::Array { elem, .. } = *w.kind(aggty) else {
            return Err(internal("computed index into a tuple"));
        };
        let es = self.shape(elem)?;
        let i = self.index64(index)?;
        let off = self.b.ins().imul_imm_s(i, es.size as i64);
        Ok((self.b.ins().iadd(base, off), es))
    }

    fn lea(&mut self, ptr: Def, index: Def) -> R<V> {
        let w = self.w();
        let p = self.scalar(ptr)?;
        let TypeKind::Ptr { pointee, .. } = *w.kind(w.type_of(ptr)) else {
            return Err(internal("lea on a non-pointer"));
        };
        let addr = match w.kind(pointee) {
            TypeKind::Array { elem, .. } => {
                let es = self.shape(*elem)?;
                let i = self.index64(index)?;
                let off = self.b.ins().imul_imm_s(i, es.size as i64);
                self.b.ins().iadd(p, off)
            }
            _ => {
                let i = w
                    .lit_bits(index)
                    .ok_or_else(|| internal("field address with a computed index"))?;
                let (_, _, off) = self.m.types.component(w, pointee, i)?;
                self.b.ins().iadd_imm_s(p, off as i64)
            }
        };
        Ok(smallvec![addr])
    }

    fn arith(&mut self, op: ArithOp, ty: Type, a: Def, b: Def) -> R<Value> {
        let p = self.prim(ty)?;
        let (x, y) = (self.scalar(a)?, self.scalar(b)?);
        if let Prim::Float { bits } = p {
            let (x, y) = (self.float(p, x)?, self.float(p, y)?);
            let ins = self.b.ins();
            let r = match op {
                ArithOp::Add => ins.fadd(x, y),
                ArithOp::Sub => ins.fsub(x, y),
                ArithOp::Mul => ins.fmul(x, y),
                ArithOp::Div => ins.fdiv(x, y),
                ArithOp::Rem => {
                    let t = self.b.func.dfg.value_type(x);
                    let name = if t == cl::F32 { "fmodf" } else { "fmod" };
                    let ps = [AbiParam::new(t), AbiParam::new(t)];
                    self.call_helper(name, &[x, y], &ps, AbiParam::new(t))?
                }
                _ => return Err(internal("bit operation on floats")),
            };
            return if bits == 16 { self.to_f16(r) } else { Ok(r) };
        }
        let signed = matches!(p, Prim::Int { signed: true, .. });
        let ins = self.b.ins();
        Ok(match op {
            ArithOp::Add => ins.iadd(x, y),
            ArithOp::Sub => ins.isub(x, y),
            ArithOp::Mul => ins.imul(x, y),
            ArithOp::And => ins.band(x, y),
            ArithOp::Or => ins.bor(x, y),
            ArithOp::Xor => ins.bxor(x, y),
            // Cranelift takes shift amounts modulo the width, as the interpreter does.
            ArithOp::Shl => ins.ishl(x, y),
            ArithOp::Shr if signed => ins.sshr(x, y),
            ArithOp::Shr => ins.ushr(x, y),
            ArithOp::Div | ArithOp::Rem => return self.division(op, signed, x, y, b),
        })
    }

    /// Integer division and remainder: division by zero is a run-time error; the signed
    /// minimum divided by -1 wraps (its remainder is 0), as in the interpreter.
    fn division(
        &mut self,
        op: ArithOp,
        signed: bool,
        x: Value,
        y: Value,
        divisor: Def,
    ) -> R<Value> {
        let w = self.w();
        let ty = self.b.func.dfg.value_type(y);
        let known = w
            .lit_bits(divisor)
            .map(|b| durin_ir::semantics::mask(ty.bits(), b));
        if known.is_none() || known == Some(0) {
            let trap = self.trap_block()?;
            let ok = self.b.create_block();
            self.b.ins().brif(y, ok, &[], trap, &[]);
            self.b.switch_to_block(ok);
        }
        if !signed {
            return Ok(match op {
                ArithOp::Div => self.b.ins().udiv(x, y),
                _ => self.b.ins().urem(x, y),
            });
        }
        let ins = self.b.ins();
        let is_m1 = ins.icmp_imm_s(IntCC::Equal, y, -1);
        let one = self.b.ins().iconst(ty, 1);
        let safe = self.b.ins().select(is_m1, one, y);
        Ok(match op {
            ArithOp::Div => {
                let q = self.b.ins().sdiv(x, safe);
                let neg = self.b.ins().ineg(x);
                self.b.ins().select(is_m1, neg, q)
            }
            _ => {
                let r = self.b.ins().srem(x, safe);
                let zero = self.b.ins().iconst(ty, 0);
                self.b.ins().select(is_m1, zero, r)
            }
        })
    }

    /// The block that stops the program with a division by zero at the division being
    /// computed (one per place; filled at the end of the function, so that the current
    /// block stays open).
    fn trap_block(&mut self) -> R<Block> {
        let text = program::division_error_text(self.w(), self.m.places, self.at, self.current);
        if let Some(&(_, b)) = self.trap_blocks.iter().find(|(t, _)| *t == text) {
            return Ok(b);
        }
        let bb = self.b.create_block();
        self.b.set_cold_block(bb);
        self.trap_blocks.push((text, bb));
        Ok(bb)
    }

    /// The address of `text` as a zero-terminated string constant.
    fn string(&mut self, text: &str) -> R<Value> {
        let data = match self.m.messages.get(text) {
            Some(&id) => id,
            None => {
                let id = self
                    .m
                    .module
                    .declare_anonymous_data(false, false)
                    .map_err(module_error)?;
                let mut desc = DataDescription::new();
                let mut bytes = text.as_bytes().to_vec();
                bytes.push(0);
                desc.define(bytes.into_boxed_slice());
                self.m.module.define_data(id, &desc).map_err(module_error)?;
                self.m.messages.insert(text.to_string(), id);
                id
            }
        };
        let gv = self.m.module.declare_data_in_func(data, self.b.func);
        Ok(self.b.ins().symbol_value(cl::I64, gv))
    }

    /// With bounds checks: checks every array index on the way from the accessed pointer
    /// `ptr` (a chain of `lea`s) to its base, for the access `at`.
    fn check_bounds(&mut self, ptr: Def, at: Def) -> R<()> {
        let Some(sources) = self.m.bounds_checks else {
            return Ok(());
        };
        let w = self.w();
        let i64p = AbiParam::new(cl::I64);
        for a in array_indices(w, ptr) {
            // In library code, the program's call that code was specialized for first.
            let expanded = w.expansion_calls(w.jump_place(self.current).1);
            let place = sources.place_in_program(w.loc(at).or(w.loc(a.lea)), &expanded);
            let place = self.string(&place)?;
            let i = self.index64(a.index)?;
            // Inside when `i < len` (unsigned) for a fixed-size array; behind a pointer,
            // when `-before <= i < from` for the room the runtime finds around the base.
            let (inside, len) = match a.len {
                Some(n) => {
                    let len = self.b.ins().iconst(cl::I64, n as i64);
                    (self.b.ins().icmp(IntCC::UnsignedLessThan, i, len), len)
                }
                None => {
                    let b = self.scalar(a.base)?;
                    let size = self.shape(a.elem)?.size as i64;
                    let size = self.b.ins().iconst(cl::I64, size);
                    let room = self
                        .m
                        .helper("durin_index_room", &[i64p, i64p], &[i64p, i64p])?;
                    let room = self.func_ref(room);
                    let call = self.b.ins().call(room, &[b, size]);
                    let (before, from) =
                        (self.b.inst_results(call)[0], self.b.inst_results(call)[1]);
                    let up = self.b.ins().icmp(IntCC::SignedLessThan, i, from);
                    let neg = self.b.ins().ineg(i);
                    let down = self
                        .b
                        .ins()
                        .icmp(IntCC::UnsignedLessThanOrEqual, neg, before);
                    let nonneg = self
                        .b
                        .ins()
                        .icmp_imm_s(IntCC::SignedGreaterThanOrEqual, i, 0);
                    (self.b.ins().select(nonneg, up, down), from)
                }
            };
            let (ok, bad) = (self.b.create_block(), self.b.create_block());
            self.b.set_cold_block(bad);
            self.b.ins().brif(inside, ok, &[], bad, &[]);
            self.b.switch_to_block(bad);
            let err = self
                .m
                .helper("durin_index_error", &[i64p, i64p, i64p], &[])?;
            let err = self.func_ref(err);
            self.b.ins().call(err, &[i, len, place]);
            self.b.ins().trap(TrapCode::unwrap_user(1));
            self.b.switch_to_block(ok);
        }
        Ok(())
    }

    /// Calls `durin_runtime_error(message)` (which does not return) and ends the block.
    fn runtime_error(&mut self, text: &str) -> R<()> {
        let message = self.string(text)?;
        let err = self
            .m
            .helper("durin_runtime_error", &[AbiParam::new(cl::I64)], &[])?;
        let err = self.func_ref(err);
        self.b.ins().call(err, &[message]);
        self.b.ins().trap(TrapCode::unwrap_user(1));
        Ok(())
    }

    fn cmp(&mut self, op: CmpOp, a: Def, b: Def) -> R<Value> {
        if matches!(self.w().kind(self.w().type_of(a)), TypeKind::Ptr { .. }) {
            // Pointer equality (the only comparison the IR has on pointers).
            let (x, y) = (self.scalar(a)?, self.scalar(b)?);
            let cc = if op == CmpOp::Eq {
                IntCC::Equal
            } else {
                IntCC::NotEqual
            };
            return Ok(self.b.ins().icmp(cc, x, y));
        }
        let p = self.prim(self.w().type_of(a))?;
        let (x, y) = (self.scalar(a)?, self.scalar(b)?);
        if let Prim::Float { .. } = p {
            let (x, y) = (self.float(p, x)?, self.float(p, y)?);
            let cc = match op {
                CmpOp::Eq => FloatCC::Equal,
                CmpOp::Ne => FloatCC::NotEqual,
                CmpOp::Lt => FloatCC::LessThan,
                CmpOp::Le => FloatCC::LessThanOrEqual,
                CmpOp::Gt => FloatCC::GreaterThan,
                CmpOp::Ge => FloatCC::GreaterThanOrEqual,
            };
            return Ok(self.b.ins().fcmp(cc, x, y));
        }
        let signed = matches!(p, Prim::Int { signed: true, .. });
        let cc = match (op, signed) {
            (CmpOp::Eq, _) => IntCC::Equal,
            (CmpOp::Ne, _) => IntCC::NotEqual,
            (CmpOp::Lt, true) => IntCC::SignedLessThan,
            (CmpOp::Le, true) => IntCC::SignedLessThanOrEqual,
            (CmpOp::Gt, true) => IntCC::SignedGreaterThan,
            (CmpOp::Ge, true) => IntCC::SignedGreaterThanOrEqual,
            (CmpOp::Lt, false) => IntCC::UnsignedLessThan,
            (CmpOp::Le, false) => IntCC::UnsignedLessThanOrEqual,
            (CmpOp::Gt, false) => IntCC::UnsignedGreaterThan,
            (CmpOp::Ge, false) => IntCC::UnsignedGreaterThanOrEqual,
        };
        Ok(self.b.ins().icmp(cc, x, y))
    }

    fn conv(&mut self, x: Def, to: Type) -> R<Value> {
        let w = self.w();
        let v = self.scalar(x)?;
        // A pointer is a 64-bit integer: an integer widens to it by its sign.
        if let TypeKind::Ptr { .. } = w.kind(w.type_of(x)) {
            let Prim::Int { bits, .. } = self.prim(to)? else {
                return Err(internal("a pointer converts only to an integer"));
            };
            return Ok(self.extend(v, int_type(bits as u32), false));
        }
        if let TypeKind::Ptr { .. } = w.kind(to) {
            let signed = matches!(self.prim(w.type_of(x))?, Prim::Int { signed: true, .. });
            return Ok(self.extend(v, cl::I64, signed));
        }
        let (from, to) = (self.prim(w.type_of(x))?, self.prim(to)?);
        Ok(match (from, to) {
            (Prim::Bool, Prim::Bool) => v,
            (Prim::Float { .. }, Prim::Bool) => {
                let f = self.float(from, v)?;
                let ty = self.b.func.dfg.value_type(f);
                let zero = self.float_zero(ty);
                self.b.ins().fcmp(FloatCC::NotEqual, f, zero)
            }
            (_, Prim::Bool) => self.b.ins().icmp_imm_s(IntCC::NotEqual, v, 0),
            (Prim::Bool, Prim::Int { bits, .. }) => self.extend(v, int_type(bits as u32), false),
            (Prim::Bool | Prim::Int { .. }, Prim::Float { bits }) => {
                let signed = matches!(from, Prim::Int { signed: true, .. });
                // Convert from the 64-bit integer (exact) to the float type; `f16` goes
                // through `f64`, rounding once at the end.
                let wide = self.extend(v, cl::I64, signed);
                let fty = if bits == 32 { cl::F32 } else { cl::F64 };
                let f = if signed {
                    self.b.ins().fcvt_from_sint(fty, wide)
                } else {
                    self.b.ins().fcvt_from_uint(fty, wide)
                };
                if bits == 16 {
                    self.to_f16(f)?
                } else {
                    f
                }
            }
            (Prim::Int { signed, .. }, Prim::Int { bits, .. }) => {
                self.extend(v, int_type(bits as u32), signed)
            }
            (Prim::Float { .. }, Prim::Int { bits, signed }) => {
                // Saturating, NaN to 0; narrow types saturate in 32 bits, then clamp.
                let f = self.float(from, v)?;
                let it = if bits == 64 { cl::I64 } else { cl::I32 };
                let ins = self.b.ins();
                let r = if signed {
                    ins.fcvt_to_sint_sat(it, f)
                } else {
                    ins.fcvt_to_uint_sat(it, f)
                };
                if bits >= 32 {
                    return Ok(r);
                }
                let r = if signed {
                    let hi = self.b.ins().iconst(cl::I32, (1i64 << (bits - 1)) - 1);
                    let lo = self.b.ins().iconst(cl::I32, -(1i64 << (bits - 1)));
                    let r = self.b.ins().smin(r, hi);
                    self.b.ins().smax(r, lo)
                } else {
                    let hi = self.b.ins().iconst(cl::I32, (1i64 << bits) - 1);
                    self.b.ins().umin(r, hi)
                };
                self.b.ins().ireduce(int_type(bits as u32), r)
            }
            (Prim::Float { bits: a }, Prim::Float { bits: c }) if a == c => v,
            (Prim::Float { .. }, Prim::Float { bits: 16 }) => self.to_f16(v)?,
            (Prim::Float { .. }, Prim::Float { bits }) => {
                let f = self.float(from, v)?;
                let src = self.b.func.dfg.value_type(f);
                match (src, bits) {
                    (cl::F32, 64) => self.b.ins().fpromote(cl::F64, f),
                    (cl::F64, 32) => self.b.ins().fdemote(cl::F32, f),
                    _ => f,
                }
            }
        })
    }

    fn float_zero(&mut self, ty: cl::Type) -> Value {
        if ty == cl::F32 {
            self.b.ins().f32const(0.0)
        } else {
            self.b.ins().f64const(0.0)
        }
    }

    /// Ends the current block with a jump to `callee` with `args` (defs and their values).
    fn jump(&mut self, callee: Def, args: &[Def], vals: &[V]) -> R<()> {
        let w = self.w();
        match w.node(callee) {
            Node::Param(i) => {
                // The function's own return point.
                let owner = w.ops(callee)[0];
                let sig = &self.m.functions[&self.entry].1;
                if owner == self.entry
                    && sig.ret.is_some()
                    && i as usize == param_types(w, owner).len() - 1
                {
                    let flat: SmallVec<[Value; 4]> = vals.iter().flatten().copied().collect();
                    self.b.ins().return_(&flat);
                    return Ok(());
                }
                return Err(unsupported(
                    "a jump to a continuation received as a parameter (closure elimination leaves none)",
                ));
            }
            Node::Bottom => return self.runtime_error("a jump to an undefined continuation"),
            _ => {}
        }
        if let Some(bb) = self.block_of(callee) {
            let bargs = self.block_args(callee, vals)?;
            self.b.ins().jump(bb, &bargs);
            return Ok(());
        }
        if w.node(callee) == Node::Select {
            let ops: SmallVec<[Def; 3]> = w.ops(callee).iter().copied().collect();
            let c = self.scalar(ops[0])?;
            // Straight to a block; otherwise through a new block that makes the jump
            // (returning or calling).
            let mut targets: SmallVec<[(Block, Vec<BlockArg>, Option<Def>); 2]> = SmallVec::new();
            for &k in &ops[1..] {
                targets.push(match self.block_of(k) {
                    Some(bb) => (bb, self.block_args(k, vals)?, None),
                    None => (self.b.create_block(), Vec::new(), Some(k)),
                });
            }
            self.b
                .ins()
                .brif(c, targets[0].0, &targets[0].1, targets[1].0, &targets[1].1);
            for (bb, _, through) in targets {
                if let Some(k) = through {
                    self.b.switch_to_block(bb);
                    self.jump(k, args, vals)?;
                }
            }
            return Ok(());
        }
        self.call(callee, args, vals)
    }

    /// The block arguments of a jump to block `k`: the values' scalars, with a zero for a
    /// parameter that receives a block or a return point (nothing to pass).
    fn block_args(&mut self, k: Def, vals: &[V]) -> R<Vec<BlockArg>> {
        let w = self.w();
        let mut out = Vec::new();
        for (t, v) in param_types(w, k).into_iter().zip(vals) {
            let shape = self.shape(t)?;
            if v.len() == shape.leaves.len() {
                out.extend(v.iter().map(|&x| BlockArg::Value(x)));
            } else if v.is_empty() {
                for &(ty, _) in &shape.leaves {
                    let z = self.literal(ty, 0);
                    out.push(BlockArg::Value(z));
                }
            } else {
                return Err(internal("a jump's arguments do not match the block"));
            }
        }
        Ok(out)
    }

    /// A call of a top-level function, an import or a function pointer, then a jump to the
    /// return point it was given.
    fn call(&mut self, callee: Def, args: &[Def], vals: &[V]) -> R<()> {
        let w = self.w();
        let sig = program::call_signature(w, callee).map_err(unsupported)?;
        let call_args: SmallVec<[Value; 8]> = sig
            .params
            .iter()
            .flat_map(|&i| vals[i].iter().copied())
            .collect();
        if w.name(callee) == Some("durin_vectorize_hint") && w.body(callee).is_none() {
            // A hint for LLVM's loop vectorizer: nothing to do here.
            let ret_point = *args
                .last()
                .ok_or_else(|| internal("call without a return point"))?;
            return self.jump(ret_point, &[], &[V::new()]);
        }
        let results: Vec<Value> = match self.m.functions.get(&callee) {
            Some(&(id, _)) => {
                let name = w.name(callee).unwrap_or("");
                match self.math_instruction(callee, name, &call_args) {
                    Some(r) => vec![r],
                    None if w.body(callee).is_none() && program::MEMORY_HINTS.contains(&name) => {
                        self.hint(name, &call_args)?
                    }
                    None => {
                        let f = self.func_ref(id);
                        let tail = CallConv::Tail;
                        if self.b.func.signature.call_conv == tail
                            && self.b.func.dfg.signatures[self.b.func.dfg.ext_funcs[f].signature]
                                .call_conv
                                == tail
                            && self.tail_calls
                            && program::is_tail_call(w, self.entry, callee, args)
                        {
                            // A guaranteed tail call: recursion through it takes no stack.
                            self.b.ins().return_call(f, &call_args);
                            return Ok(());
                        }
                        let inst = self.b.ins().call(f, &call_args);
                        self.b.inst_results(inst).to_vec()
                    }
                }
            }
            None => {
                let csig = self.m.signature(&sig)?;
                let sref = self.b.import_signature(csig);
                let fp = self.scalar(callee)?;
                let inst = self.b.ins().call_indirect(sref, fp, &call_args);
                self.b.inst_results(inst).to_vec()
            }
        };
        let Some(ret_types) = sig.ret.clone() else {
            self.b.ins().trap(TrapCode::unwrap_user(3));
            return Ok(());
        };
        let mut next = results.into_iter();
        let mut ret_vals = Vec::with_capacity(ret_types.len());
        for t in ret_types {
            let n = self.shape(t)?.leaves.len();
            ret_vals.push(next.by_ref().take(n).collect::<V>());
        }
        let ret_point = *args
            .last()
            .ok_or_else(|| internal("call without a return point"))?;
        self.jump(ret_point, &[], &ret_vals)
    }

    /// The stdlib's memory hints: `durin_aligned` is computed, a streaming store is a
    /// plain store, `durin_assume_aligned` and the fence are nothing (no optimizer here uses them).
    fn hint(&mut self, name: &str, args: &[Value]) -> R<Vec<Value>> {
        Ok(match (name, args) {
            ("durin_aligned", &[p, n]) => {
                let n = match self.b.func.dfg.value_type(n) {
                    cl::I64 => n,
                    _ => self.b.ins().uextend(cl::I64, n),
                };
                let mask = self.b.ins().iadd_imm_s(n, -1);
                let low = self.b.ins().band(p, mask);
                vec![self.b.ins().icmp_imm_s(IntCC::Equal, low, 0)]
            }
            ("durin_store_stream_f32", &[p, v]) => {
                self.b.ins().store(MemFlagsData::new(), v, p, 0);
                Vec::new()
            }
            ("durin_assume_aligned", _)
            | ("durin_store_fence", _)
            | ("durin_prefetch", _)
            | ("durin_shm_stage", _)
            | ("durin_shm_keep", _)
            | ("durin_launch_note", _) => Vec::new(),
            _ => {
                return Err(internal(format!(
                    "`{name}` called with the wrong arguments"
                )))
            }
        })
    }

    /// A C math function that is one Cranelift instruction (`sqrt`, `fabs`, `floor`,
    /// `ceil`, and their `f` forms), called on one float.
    fn math_instruction(&mut self, callee: Def, name: &str, args: &[Value]) -> Option<Value> {
        let w = self.w();
        if w.body(callee).is_some() {
            return None;
        }
        let base = name
            .strip_suffix('f')
            .filter(|b| MATH_INSTRUCTIONS.contains(b));
        let (base, want) = match base {
            Some(b) => (b, cl::F32),
            None if MATH_INSTRUCTIONS.contains(&name) => (name, cl::F64),
            None => return None,
        };
        let [x] = args else { return None };
        let sig = &self.m.functions[&callee].1;
        let results = sig.results(w);
        let float = |t: Type| matches!(w.kind(t), TypeKind::Float { bits } if (*bits == 32) == (want == cl::F32) && *bits != 16);
        if self.b.func.dfg.value_type(*x) != want || results.len() != 1 || !float(results[0]) {
            return None;
        }
        let ins = self.b.ins();
        Some(match base {
            "sqrt" => ins.sqrt(*x),
            "fabs" => ins.fabs(*x),
            "floor" => ins.floor(*x),
            _ => ins.ceil(*x),
        })
    }
}
