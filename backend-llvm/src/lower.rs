//! First-order IR to LLVM IR.
//!
//! Each top-level continuation with a body becomes a function; the continuations of its
//! scope become basic blocks whose parameters are phis; its return point becomes `ret`.
//! A jump to another top-level continuation (or through a function pointer) is a call
//! followed by a jump to the return point it was given. Imports become declarations with
//! their C names (math functions of the C library become LLVM intrinsics where LLVM has
//! them); externals with a body keep their names and the C calling convention; everything
//! else is internal. Globals become LLVM globals.
//!
//! Defs are placed by the late schedule (so that a division is computed only where its
//! result is used: it traps on zero, as in the interpreter). Defs that depend on no
//! parameter are computed once in the function's prologue (constants fold there).

use crate::types::Types;
use crate::{internal, unsupported};
use durin_diag::{Diagnostic, SourceMap};
use durin_ir::analysis::cfg::{Cfg, DomTree};
use durin_ir::analysis::program::{
    self, array_indices, may_trap, param_types, Operand, Program, Signature,
};
use durin_ir::analysis::schedule::{Placement, Schedule};
use durin_ir::semantics::Prim;
use durin_ir::{ArithOp, CmpOp, Def, Node, Type, TypeKind, World};
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::basic_block::BasicBlock;
use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::intrinsics::Intrinsic;
use inkwell::module::{Linkage, Module};
use inkwell::types::{BasicType, BasicTypeEnum};
use inkwell::values::{
    BasicMetadataValueEnum, BasicValue, BasicValueEnum, FunctionValue, GlobalValue, IntValue,
    PhiValue, PointerValue,
};
use inkwell::{AddressSpace, FloatPredicate, IntPredicate};
use rustc_hash::FxHashMap;

/// A value during translation: `mem` carries nothing.
#[derive(Clone, Copy)]
enum V<'ctx> {
    Mem,
    Val(BasicValueEnum<'ctx>),
}

/// What is attached to every function defined: the target CPU and its features, and the
/// checks compiled into it.
pub struct Target<'a> {
    /// CPU name (`target-cpu`).
    pub cpu: &'a str,
    /// Feature string (`target-features`).
    pub features: &'a str,
    /// Bounds checks, naming places in these sources (see `Options::bounds_checks`).
    pub bounds_checks: Option<&'a SourceMap>,
    /// The sources run-time errors name places in (see `Options::places`).
    pub places: Option<&'a SourceMap>,
}

/// Translates the program of `w` into a new module of `ctx`.
pub fn lower<'ctx>(
    ctx: &'ctx Context,
    w: &World,
    name: &str,
    target: &Target,
) -> Result<Module<'ctx>, Diagnostic> {
    let program = program::collect(w);
    let module = ctx.create_module(name);
    let mut m = ModuleLowering {
        ctx,
        w,
        module: &module,
        types: Types::new(ctx),
        functions: FxHashMap::default(),
        globals: FxHashMap::default(),
        program: &program,
        bounds_checks: target.bounds_checks,
        places: target.places,
    };
    m.declare(target)?;
    for &g in &program.globals {
        m.define_global(g)?;
    }
    // Initializers are constants that may name functions and other globals: set them once
    // everything is declared.
    for &g in &program.globals {
        let init = m.constant(w.ops(g)[0]).map_err(|e| e.at(w.loc(g)))?;
        m.globals[&g].set_initializer(&init);
    }
    for &f in &program.functions {
        m.define_function(f)?;
    }
    if let Err(e) = module.verify() {
        return Err(internal(format!(
            "the LLVM module does not verify: {}",
            e.to_string()
        )));
    }
    Ok(module)
}

struct ModuleLowering<'a, 'ctx> {
    ctx: &'ctx Context,
    w: &'a World,
    module: &'a Module<'ctx>,
    types: Types<'ctx>,
    /// Top-level continuations (with or without a body) and their LLVM functions.
    functions: FxHashMap<Def, (FunctionValue<'ctx>, Signature)>,
    globals: FxHashMap<Def, GlobalValue<'ctx>>,
    program: &'a Program,
    bounds_checks: Option<&'a SourceMap>,
    places: Option<&'a SourceMap>,
}

/// The runtime's allocation functions: each returns memory no other pointer points into.
const ALLOC_FNS: [&str; 4] = [
    "anydsl_alloc",
    "anydsl_alloc_host",
    "anydsl_alloc_unified",
    "durin_alloc_cpu_blocks",
];

/// LLVM's `memory(none)` (the attribute's value has two bits per kind of memory, all zero).
const NO_MEMORY: u64 = 0;

/// Adds the enum attributes `attrs` (name and value) to function `f`.
fn mark(ctx: &Context, f: FunctionValue, attrs: &[(&str, u64)]) {
    for &(name, value) in attrs {
        let kind = Attribute::get_named_enum_kind_id(name);
        f.add_attribute(
            AttributeLoc::Function,
            ctx.create_enum_attribute(kind, value),
        );
    }
}

/// The bytes of `d` if it is a byte string or an array of 8-bit integer literals.
fn byte_array(w: &World, d: Def) -> Option<Vec<u8>> {
    if let Some(b) = w.bytes_of(d) {
        return Some(b.to_vec());
    }
    if w.node(d) != Node::Array {
        return None;
    }
    (w.ops(d).iter())
        .map(|&o| match (w.node(o), w.kind(w.type_of(o))) {
            (Node::Lit(bits), TypeKind::Int { bits: 8, .. }) => Some(bits as u8),
            _ => None,
        })
        .collect()
}

/// The stdlib's marker of a loop to vectorize: `durin_vectorize_hint(width)` at the head of
/// the loop becomes loop metadata, not a call.
pub const VECTORIZE_HINT: &str = "durin_vectorize_hint";

/// The C math functions that LLVM has intrinsics for, with the intrinsic's name.
const MATH_INTRINSICS: &[(&str, &str)] = &[
    ("sqrt", "llvm.sqrt"),
    ("sin", "llvm.sin"),
    ("cos", "llvm.cos"),
    ("tan", "llvm.tan"),
    ("asin", "llvm.asin"),
    ("acos", "llvm.acos"),
    ("atan", "llvm.atan"),
    ("exp", "llvm.exp"),
    ("exp2", "llvm.exp2"),
    ("log", "llvm.log"),
    ("log2", "llvm.log2"),
    ("log10", "llvm.log10"),
    ("pow", "llvm.pow"),
    ("fabs", "llvm.fabs"),
    ("floor", "llvm.floor"),
    ("ceil", "llvm.ceil"),
    ("round", "llvm.round"),
    ("fmin", "llvm.minnum"),
    ("fmax", "llvm.maxnum"),
    ("fma", "llvm.fma"),
];

impl<'a, 'ctx> ModuleLowering<'a, 'ctx> {
    fn loc_error(&self, d: Def, e: Diagnostic) -> Diagnostic {
        e.at(self.w.loc(d))
    }

    /// Declares every function: externals first, so that they keep their names.
    fn declare(&mut self, target: &Target) -> Result<(), Diagnostic> {
        let w = self.w;
        let mut order: Vec<Def> = self.program.imports.clone();
        order.extend(self.program.functions.iter().copied());
        order.sort_by_key(|&k| (!w.is_external(k) && w.body(k).is_some(), k));
        for k in order {
            let sig = Signature::of(w, w.type_of(k)).ok_or_else(|| {
                self.loc_error(
                    k,
                    unsupported(format!(
                        "`{}` takes a continuation that is not its return point",
                        w.name(k).unwrap_or("?")
                    )),
                )
            })?;
            let fty = if w.body(k).is_none() {
                self.types.import_function(w, &sig)
            } else {
                self.types.function(w, &sig)
            }
            .map_err(|e| self.loc_error(k, e))?;
            let name = w.name(k).unwrap_or("fn");
            let f = if w.body(k).is_none() {
                match self.module.get_function(name) {
                    Some(f) if f.get_type() == fty => f,
                    Some(_) => {
                        return Err(self.loc_error(
                            k,
                            unsupported(format!(
                                "the import `{name}` is declared twice with different types"
                            )),
                        ))
                    }
                    None => {
                        let f = self.module.add_function(name, fty, Some(Linkage::External));
                        if durin_ir::launch::LAUNCH_FNS.contains(&name) {
                            // LLVM copies no call of it: it unrolled every timing loop around
                            // a launch (vcycle's 103, seven times each) for no run time.
                            mark(self.ctx, f, &[("noduplicate", 0)]);
                        }
                        if ALLOC_FNS.contains(&name)
                            && fty.get_return_type().is_some_and(|t| t.is_pointer_type())
                        {
                            // Fresh memory, as `malloc`'s: no other pointer of the caller
                            // points into it, so LLVM knows that an image read at indices
                            // it cannot bound (a gather) is not the one a loop writes.
                            let noalias = Attribute::get_named_enum_kind_id("noalias");
                            f.add_attribute(
                                AttributeLoc::Return,
                                self.ctx.create_enum_attribute(noalias, 0),
                            );
                        }
                        f
                    }
                }
            } else {
                let linkage = if w.is_external(k) {
                    Linkage::External
                } else {
                    Linkage::Internal
                };
                let f = self.module.add_function(name, fty, Some(linkage));
                if !w.is_external(k) && !self.program.address_taken.contains(&k) {
                    // Only ever called directly: the convention that guarantees tail calls.
                    f.set_call_conventions(TAILCC);
                }
                if w.is_no_inline(k) {
                    // Split off a large function (the `split` pass): inlined back, LLVM would
                    // optimize one function of the whole size again.
                    mark(self.ctx, f, &[("noinline", 0)]);
                }
                for (key, value) in [
                    ("target-cpu", target.cpu),
                    ("target-features", target.features),
                ] {
                    if !value.is_empty() {
                        f.add_attribute(
                            inkwell::attributes::AttributeLoc::Function,
                            self.ctx.create_string_attribute(key, value),
                        );
                    }
                }
                let nounwind = inkwell::attributes::Attribute::get_named_enum_kind_id("nounwind");
                f.add_attribute(
                    inkwell::attributes::AttributeLoc::Function,
                    self.ctx.create_enum_attribute(nounwind, 0),
                );
                f
            };
            self.functions.insert(k, (f, sig));
        }
        Ok(())
    }

    fn define_global(&mut self, g: Def) -> Result<(), Diagnostic> {
        let w = self.w;
        let init = w.ops(g)[0];
        let ty = self
            .types
            .value(w, w.type_of(init))
            .map_err(|e| self.loc_error(g, e))?;
        let name = w.name(g).unwrap_or("global");
        let gv = self
            .module
            .add_global(ty, Some(AddressSpace::default()), name);
        gv.set_linkage(Linkage::Internal);
        gv.set_constant(!matches!(w.node(g), Node::Global { mutable: true }));
        self.globals.insert(g, gv);
        Ok(())
    }

    fn define_function(&mut self, f: Def) -> Result<(), Diagnostic> {
        let builder = self.ctx.create_builder();
        let (func, _) = &self.functions[&f];
        let func = *func;
        let scope = self.program.scope(self.w, f);
        let cfg = Cfg::compute(self.w, &scope);
        let dom = DomTree::compute(&cfg);
        let schedule = Schedule::compute(self.w, &scope, &cfg, &dom, Placement::Late);
        let at_use = program::computed_where_used(self.w, &schedule, cfg.reverse_post_order());
        let prologue = self.ctx.append_basic_block(func, "prologue");
        let tail_calls = program::may_tail_call(self.w, &scope);
        let mut fl = FunctionLowering {
            m: self,
            builder,
            func,
            entry: f,
            tail_calls,
            prologue,
            blocks: FxHashMap::default(),
            phis: FxHashMap::default(),
            vals: FxHashMap::default(),
            trap_blocks: FxHashMap::default(),
            current: f,
            at: f,
            at_use,
            local: FxHashMap::default(),
            back_edges: rustc_hash::FxHashSet::default(),
            vectorize: FxHashMap::default(),
            parallel: Vec::new(),
        };
        for &k in cfg.reverse_post_order() {
            for s in cfg.succs(k) {
                if dom.dominates(&cfg, s, k) {
                    fl.back_edges.insert((k, s));
                }
            }
        }
        fl.run(&cfg, &schedule)
    }

    /// An LLVM constant for a def that depends on no parameter.
    fn constant(&mut self, d: Def) -> Result<BasicValueEnum<'ctx>, Diagnostic> {
        let w = self.w;
        let ty = w.type_of(d);
        let err = |what: &str| unsupported(format!("{what} in a global's initializer"));
        if let Some(a) = w.lit_address(d) {
            let BasicTypeEnum::PointerType(p) = self.types.value(w, ty)? else {
                return Err(internal("a pointer constant of a non-pointer type"));
            };
            return Ok(self
                .ctx
                .i64_type()
                .const_int(a, false)
                .const_to_pointer(p)
                .into());
        }
        if let Some(bytes) = byte_array(w, d) {
            // A byte array (a string, or a kernel module's text: a megabyte for the largest
            // programs) as LLVM's packed data, not one constant per byte.
            return Ok(self.ctx.const_string(&bytes, false).into());
        }
        Ok(match w.node(d) {
            Node::Lit(bits) => self.literal(ty, bits)?,
            Node::Bottom => undef(self.types.value(w, ty)?),
            Node::Global { .. } => self.globals[&d].as_pointer_value().into(),
            Node::Cont => match self.functions.get(&d) {
                Some((f, _)) => f.as_global_value().as_pointer_value().into(),
                None => return Err(err("a block")),
            },
            Node::Bitcast if matches!(w.kind(ty), TypeKind::Ptr { .. }) => {
                self.constant(w.ops(d)[0])?
            }
            Node::Tuple | Node::Struct | Node::Array => {
                let mut parts = Vec::new();
                for &o in w.ops(d) {
                    if !w.types().is_mem(w.type_of(o)) {
                        parts.push(self.constant(o)?);
                    }
                }
                match self.types.value(w, ty)? {
                    BasicTypeEnum::StructType(s) => s.const_named_struct(&parts).into(),
                    BasicTypeEnum::ArrayType(a) => const_array(a, &parts).into(),
                    _ => return Err(internal("aggregate of a scalar type")),
                }
            }
            n => return Err(err(&format!("`{}`", n.name()))),
        })
    }

    fn literal(&mut self, ty: Type, bits: u64) -> Result<BasicValueEnum<'ctx>, Diagnostic> {
        let w = self.w;
        Ok(match Prim::of(w.kind(ty)) {
            Some(Prim::Bool) => self.ctx.bool_type().const_int(bits & 1, false).into(),
            Some(Prim::Int { bits: b, .. }) => crate::types::int_type(self.ctx, b as u32)
                .const_int(bits, false)
                .into(),
            Some(Prim::Float { bits: b }) => {
                let x = durin_ir::semantics::float_value(b, bits);
                match self.types.value(w, ty)? {
                    BasicTypeEnum::FloatType(f) => f.const_float(x).into(),
                    _ => return Err(internal("float literal of a non-float type")),
                }
            }
            None => return Err(internal("literal of a non-primitive type")),
        })
    }

    /// The LLVM function for a math import (`sqrt`, `sqrtf`, ...) if LLVM has an intrinsic.
    fn math_intrinsic(&self, name: &str, sig: &Signature) -> Option<FunctionValue<'ctx>> {
        let (base, single) = match name.strip_suffix('f') {
            Some(b) if MATH_INTRINSICS.iter().any(|(n, _)| *n == b) => (b, true),
            _ => (name, false),
        };
        let (_, intrinsic) = MATH_INTRINSICS.iter().find(|(n, _)| *n == base)?;
        let want = if single { 32 } else { 64 };
        let float = |t: &Type| matches!(self.w.kind(*t), TypeKind::Float { bits } if *bits == want);
        let results = sig.results(self.w);
        if !sig.param_types.iter().all(float) || results.len() != 1 || !float(&results[0]) {
            return None;
        }
        let fty: BasicTypeEnum = if single {
            self.ctx.f32_type().into()
        } else {
            self.ctx.f64_type().into()
        };
        Intrinsic::find(intrinsic)?.get_declaration(self.module, &[fty])
    }
}

fn undef(t: BasicTypeEnum<'_>) -> BasicValueEnum<'_> {
    match t {
        BasicTypeEnum::ArrayType(t) => t.get_undef().into(),
        BasicTypeEnum::FloatType(t) => t.get_undef().into(),
        BasicTypeEnum::IntType(t) => t.get_undef().into(),
        BasicTypeEnum::PointerType(t) => t.get_undef().into(),
        BasicTypeEnum::StructType(t) => t.get_undef().into(),
        BasicTypeEnum::VectorType(t) => t.get_undef().into(),
        BasicTypeEnum::ScalableVectorType(t) => t.get_undef().into(),
    }
}

fn const_array<'ctx>(
    a: inkwell::types::ArrayType<'ctx>,
    parts: &[BasicValueEnum<'ctx>],
) -> inkwell::values::ArrayValue<'ctx> {
    use inkwell::values::AsValueRef;
    let refs: Vec<_> = parts.iter().map(|p| p.as_value_ref()).collect();
    unsafe {
        inkwell::values::ArrayValue::new_raw_const_array(
            inkwell::types::AsTypeRef::as_type_ref(&a.get_element_type()),
            &refs,
        )
    }
}

struct FunctionLowering<'m, 'a, 'ctx> {
    m: &'m mut ModuleLowering<'a, 'ctx>,
    builder: Builder<'ctx>,
    func: FunctionValue<'ctx>,
    entry: Def,
    /// Whether calls in tail position may be tail calls (see `program::may_tail_call`).
    tail_calls: bool,
    prologue: BasicBlock<'ctx>,
    blocks: FxHashMap<Def, BasicBlock<'ctx>>,
    /// The phis of each block, one per parameter (`None` for `mem`).
    phis: FxHashMap<Def, Vec<Option<PhiValue<'ctx>>>>,
    vals: FxHashMap<Def, V<'ctx>>,
    /// The blocks that report an integer division by zero, one per place.
    trap_blocks: FxHashMap<String, BasicBlock<'ctx>>,
    /// The continuation being translated.
    current: Def,
    /// The def being computed.
    at: Def,
    /// Defs computed where they are used, in each continuation that uses them
    /// ([`program::computed_where_used`]), and their values in the current one.
    at_use: rustc_hash::FxHashSet<Def>,
    local: FxHashMap<Def, V<'ctx>>,
    /// Jumps from a continuation to one that dominates it: the loops' back edges.
    back_edges: rustc_hash::FxHashSet<(Def, Def)>,
    /// Loop headers that call `durin_vectorize_hint(width)`, with the width.
    vectorize: FxHashMap<Def, u32>,
    /// The back edges (source block, header) of those loops, whose memory accesses are
    /// marked parallel once the function is lowered ([`crate::parallel_loops`]).
    parallel: Vec<(BasicBlock<'ctx>, BasicBlock<'ctx>)>,
}

type R<T> = Result<T, Diagnostic>;

fn llvm(e: inkwell::builder::BuilderError) -> Diagnostic {
    internal(format!("LLVM builder: {e}"))
}

impl<'m, 'a, 'ctx> FunctionLowering<'m, 'a, 'ctx> {
    fn w(&self) -> &'a World {
        self.m.w
    }

    fn run(&mut self, cfg: &Cfg, schedule: &Schedule) -> R<()> {
        let w = self.w();
        let ctx = self.m.ctx;
        // Blocks and their phis first: jumps add incoming values to them.
        for &k in cfg.reverse_post_order() {
            if k == self.entry || self.m.functions.contains_key(&k) {
                continue;
            }
            let bb = ctx.append_basic_block(self.func, w.name(k).unwrap_or("block"));
            self.builder.position_at_end(bb);
            let mut phis = Vec::new();
            for (i, &t) in param_types(w, k).iter().enumerate() {
                match self.m.types.get(w, t).map_err(|e| e.at(w.loc(k)))? {
                    None => {
                        if let Some(p) = w.param_if_built(k, i) {
                            self.vals.insert(p, V::Mem);
                        }
                        phis.push(None)
                    }
                    Some(lt) => {
                        let phi = self.builder.build_phi(lt, "").map_err(llvm)?;
                        if let Some(p) = w.param_if_built(k, i) {
                            if let Some(n) = w.name(p) {
                                phi.as_basic_value().set_name(n);
                            }
                            self.vals.insert(p, V::Val(phi.as_basic_value()));
                        }
                        phis.push(Some(phi));
                    }
                }
            }
            self.blocks.insert(k, bb);
            self.phis.insert(k, phis);
        }
        // The entry's parameters are the function's arguments; `mem` and the return point
        // carry nothing.
        for i in 0..param_types(w, self.entry).len() {
            if let Some(p) = w.param_if_built(self.entry, i) {
                self.vals.insert(p, V::Mem);
            }
        }
        let sig_params = self.m.functions[&self.entry].1.params.clone();
        for (arg, &i) in sig_params.iter().enumerate() {
            if let Some(p) = w.param_if_built(self.entry, i) {
                let v = self
                    .func
                    .get_nth_param(arg as u32)
                    .expect("argument exists");
                if let Some(n) = w.name(p) {
                    v.set_name(n);
                }
                self.vals.insert(p, V::Val(v));
            }
        }
        let body = ctx.append_basic_block(self.func, w.name(self.entry).unwrap_or("entry"));
        self.builder.position_at_end(self.prologue);
        self.builder
            .build_unconditional_branch(body)
            .map_err(llvm)?;
        self.blocks.insert(self.entry, body);
        for &k in cfg.reverse_post_order() {
            if k != self.entry && self.m.functions.contains_key(&k) {
                continue;
            }
            self.builder.position_at_end(self.blocks[&k]);
            self.current = k;
            self.local.clear();
            for d in program::computed_defs(w, schedule.block(k), |o| self.is_block(o)) {
                if !self.vals.contains_key(&d) && !self.at_use.contains(&d) {
                    let v = self.compute(d).map_err(|e| e.at(w.loc(d).or(w.loc(k))))?;
                    self.vals.insert(d, v);
                }
            }
            let (callee, args) = w.body(k).expect("a scheduled continuation has a body");
            let args: Vec<Def> = args.to_vec();
            let vals = args
                .iter()
                .map(|&a| self.argument(a))
                .collect::<R<Vec<_>>>()
                .map_err(|e| e.at(w.loc(k)))?;
            self.jump(callee, &args, &vals)
                .map_err(|e| e.at(w.loc(k)))?;
        }
        let kind = ctx.get_kind_id("llvm.access.group");
        crate::parallel_loops::mark_accesses(self.func, &self.parallel, self.access_group(), kind);
        Ok(())
    }

    /// A load of a small array of scalars as a load of each element: LLVM splits such a
    /// load later without the access group of a parallel loop (`parallel_loops`), which
    /// then stops being one for the vectorizer; loads made here carry it from the start.
    fn load_elements(
        &mut self,
        a: inkwell::types::ArrayType<'ctx>,
        p: PointerValue<'ctx>,
        name: &str,
    ) -> R<BasicValueEnum<'ctx>> {
        let i32t = self.m.ctx.i32_type();
        let et = a.get_element_type();
        let mut agg: inkwell::values::AggregateValueEnum<'ctx> = a.get_undef().into();
        for i in 0..a.len() {
            // SAFETY: index i of an array of a.len() elements, from the array's start.
            let q = unsafe {
                self.builder
                    .build_in_bounds_gep(
                        a,
                        p,
                        &[i32t.const_zero(), i32t.const_int(i as u64, false)],
                        "",
                    )
                    .map_err(llvm)?
            };
            let v = self.builder.build_load(et, q, "").map_err(llvm)?;
            agg = self
                .builder
                .build_insert_value(agg, v, i, name)
                .map_err(llvm)?;
        }
        Ok(agg.as_basic_value_enum())
    }

    /// The access group of the memory accesses of loops marked for vectorization: an
    /// empty node, one for all such loops (a loop's accesses are parallel for it whatever
    /// other loop they are in).
    fn access_group(&self) -> inkwell::values::MetadataValue<'ctx> {
        self.m.ctx.metadata_node(&[])
    }

    /// The value of `d`: computed before (it is placed in a dominating block), a phi or
    /// argument, or (when it depends on no parameter) computed now in the prologue.
    fn value(&mut self, d: Def) -> R<V<'ctx>> {
        if let Some(&v) = self.vals.get(&d) {
            return Ok(v);
        }
        if self.at_use.contains(&d) {
            if let Some(&v) = self.local.get(&d) {
                return Ok(v);
            }
            let v = self.compute(d)?;
            self.local.insert(d, v);
            return Ok(v);
        }
        let w = self.w();
        let v = match program::operand(w, d).map_err(internal)? {
            Operand::Global => V::Val(self.m.globals[&d].as_pointer_value().into()),
            Operand::Cont => match self.m.functions.get(&d) {
                Some((f, _)) => V::Val(f.as_global_value().as_pointer_value().into()),
                None => return Err(unsupported(program::block_as_value(w, d))),
            },
            // A division that may trap, or anything computed from one: computed where it
            // is used, each time (the prologue runs on every path).
            Operand::Computed if may_trap(w, d) => return self.compute(d),
            // Computed once, at the end of the prologue.
            Operand::Computed => self.in_prologue(|s| s.compute(d))?,
        };
        self.vals.insert(d, v);
        Ok(v)
    }

    /// Whether `k` is a basic block of this function (not a function of its own).
    fn is_block(&self, k: Def) -> bool {
        self.w().node(k) == Node::Cont && !self.m.functions.contains_key(&k)
    }

    /// The LLVM block of `k`, if `k` is a reachable block of this function.
    fn block_of(&self, k: Def) -> Option<BasicBlock<'ctx>> {
        self.blocks.get(&k).copied().filter(|_| self.is_block(k))
    }

    /// The value of a jump's argument: nothing for a block or a parameter passed as a
    /// return point (the jump decides what they mean).
    fn argument(&mut self, a: Def) -> R<V<'ctx>> {
        if program::passes_control(self.w(), a, self.m.functions.contains_key(&a)) {
            Ok(V::Mem)
        } else {
            self.value(a)
        }
    }

    fn val(&mut self, d: Def) -> R<BasicValueEnum<'ctx>> {
        match self.value(d)? {
            V::Val(v) => Ok(v),
            V::Mem => Err(internal("a `mem` token used as a value")),
        }
    }

    fn int(&mut self, d: Def) -> R<IntValue<'ctx>> {
        match self.val(d)? {
            BasicValueEnum::IntValue(i) => Ok(i),
            _ => Err(internal("expected an integer")),
        }
    }

    fn ptr(&mut self, d: Def) -> R<PointerValue<'ctx>> {
        match self.val(d)? {
            BasicValueEnum::PointerValue(p) => Ok(p),
            _ => Err(internal("expected a pointer")),
        }
    }

    fn prim(&self, t: Type) -> R<Prim> {
        Prim::of(self.w().kind(t)).ok_or_else(|| internal("expected a primitive type"))
    }

    /// Runs `f` with the builder before the prologue's terminator, then returns to where it
    /// was (the end of a block, or the prologue itself).
    fn in_prologue<T>(&mut self, f: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        let here = self.builder.get_insert_block();
        let term = self
            .prologue
            .get_terminator()
            .expect("prologue ends in a branch");
        self.builder.position_before(&term);
        let r = f(self);
        match here {
            Some(bb) if bb == self.prologue => self.builder.position_before(&term),
            Some(bb) => self.builder.position_at_end(bb),
            None => {}
        }
        r
    }

    /// An alloca in the prologue.
    fn alloca(&mut self, t: BasicTypeEnum<'ctx>, name: &str) -> R<PointerValue<'ctx>> {
        self.in_prologue(|s| s.builder.build_alloca(t, name).map_err(llvm))
    }

    /// An index as an `i64` (sign- or zero-extended by its type).
    fn index64(&mut self, d: Def) -> R<IntValue<'ctx>> {
        let i = self.int(d)?;
        let signed = matches!(
            self.prim(self.w().type_of(d))?,
            Prim::Int { signed: true, .. }
        );
        let i64t = self.m.ctx.i64_type();
        if i.get_type().get_bit_width() == 64 {
            return Ok(i);
        }
        self.builder
            .build_int_cast_sign_flag(i, i64t, signed, "")
            .map_err(llvm)
    }

    fn compute(&mut self, d: Def) -> R<V<'ctx>> {
        self.at = d;
        let w = self.w();
        let ops: Vec<Def> = w.ops(d).to_vec();
        let ty = w.type_of(d);
        let name = w.name(d).unwrap_or("");
        if w.types().is_mem(ty) && !matches!(w.node(d), Node::Store) {
            // Extracting or selecting a token: nothing to compute.
            for &o in &ops {
                self.value(o)?;
            }
            return Ok(V::Mem);
        }
        let v: BasicValueEnum<'ctx> = match w.node(d) {
            Node::Lit(bits) => self.m.literal(ty, bits)?,
            Node::Bytes(_) => self.m.constant(d)?,
            Node::Bottom => undef(self.m.types.value(w, ty)?),
            Node::Launch => {
                return Err(Diagnostic::error_at(
                    None,
                    "a kernel launch reached the back end (launches are lowered before)",
                ))
            }
            Node::Param(_) | Node::Cont | Node::Global { .. } => return self.value(d),
            Node::Arith(op) => return self.arith(op, ty, ops[0], ops[1], name).map(V::Val),
            Node::Cmp(op) if matches!(w.kind(w.type_of(ops[0])), TypeKind::Ptr { .. }) => {
                // Pointer equality (the only comparison the IR has on pointers).
                let (x, y) = (self.val(ops[0])?, self.val(ops[1])?);
                let pred = if op == CmpOp::Eq {
                    IntPredicate::EQ
                } else {
                    IntPredicate::NE
                };
                let (x, y) = (x.into_pointer_value(), y.into_pointer_value());
                self.builder
                    .build_int_compare(pred, x, y, name)
                    .map_err(llvm)?
                    .into()
            }
            Node::Cmp(op) => {
                let p = self.prim(w.type_of(ops[0]))?;
                let (x, y) = (self.val(ops[0])?, self.val(ops[1])?);
                let b = &self.builder;
                match p {
                    Prim::Float { .. } => {
                        let pred = match op {
                            CmpOp::Eq => FloatPredicate::OEQ,
                            CmpOp::Ne => FloatPredicate::UNE,
                            CmpOp::Lt => FloatPredicate::OLT,
                            CmpOp::Le => FloatPredicate::OLE,
                            CmpOp::Gt => FloatPredicate::OGT,
                            CmpOp::Ge => FloatPredicate::OGE,
                        };
                        b.build_float_compare(
                            pred,
                            x.into_float_value(),
                            y.into_float_value(),
                            name,
                        )
                        .map_err(llvm)?
                        .into()
                    }
                    _ => {
                        let signed = matches!(p, Prim::Int { signed: true, .. });
                        let pred = match (op, signed) {
                            (CmpOp::Eq, _) => IntPredicate::EQ,
                            (CmpOp::Ne, _) => IntPredicate::NE,
                            (CmpOp::Lt, true) => IntPredicate::SLT,
                            (CmpOp::Le, true) => IntPredicate::SLE,
                            (CmpOp::Gt, true) => IntPredicate::SGT,
                            (CmpOp::Ge, true) => IntPredicate::SGE,
                            (CmpOp::Lt, false) => IntPredicate::ULT,
                            (CmpOp::Le, false) => IntPredicate::ULE,
                            (CmpOp::Gt, false) => IntPredicate::UGT,
                            (CmpOp::Ge, false) => IntPredicate::UGE,
                        };
                        b.build_int_compare(pred, x.into_int_value(), y.into_int_value(), name)
                            .map_err(llvm)?
                            .into()
                    }
                }
            }
            Node::Select => {
                let c = self.int(ops[0])?;
                let (x, y) = (self.val(ops[1])?, self.val(ops[2])?);
                self.builder.build_select(c, x, y, name).map_err(llvm)?
            }
            Node::Conv => return self.conv(ops[0], ty, name).map(V::Val),
            Node::Bitcast => {
                let x = self.val(ops[0])?;
                let to = self.m.types.value(w, ty)?;
                if x.get_type() == to {
                    x
                } else {
                    self.builder.build_bit_cast(x, to, name).map_err(llvm)?
                }
            }
            Node::Tuple | Node::Struct | Node::Array => {
                let lt = self.m.types.value(w, ty)?;
                let mut agg = undef(lt);
                let mut at = 0;
                for &o in &ops {
                    if let V::Val(x) = self.value(o)? {
                        agg = self.insert_value(agg, x, at, name)?;
                        at += 1;
                    }
                }
                agg
            }
            Node::Extract => return self.extract(ops[0], ops[1], name),
            Node::Insert => {
                let aggty = w.type_of(ops[0]);
                let agg = self.val(ops[0])?;
                let x = self.value(ops[2])?;
                let V::Val(x) = x else { return Ok(V::Val(agg)) };
                match (w.lit_bits(ops[1]), w.kind(aggty)) {
                    (Some(i), TypeKind::Array { .. }) => {
                        self.insert_value(agg, x, i as u32, name)?
                    }
                    (Some(i), _) => match self.m.types.field(w, aggty, i as usize) {
                        Some(f) => self.insert_value(agg, x, f, name)?,
                        None => agg,
                    },
                    (None, _) => {
                        // A dynamic index: through memory.
                        let lt = agg.get_type();
                        let tmp = self.alloca(lt, "dyn")?;
                        let i = self.index64(ops[1])?;
                        let b = &self.builder;
                        b.build_store(tmp, agg).map_err(llvm)?;
                        let zero = self.m.ctx.i64_type().const_zero();
                        let p = unsafe { b.build_in_bounds_gep(lt, tmp, &[zero, i], "") }
                            .map_err(llvm)?;
                        b.build_store(p, x).map_err(llvm)?;
                        b.build_load(lt, tmp, name).map_err(llvm)?
                    }
                }
            }
            Node::Lea => {
                let p = self.ptr(ops[0])?;
                let TypeKind::Ptr { pointee, .. } = *w.kind(w.type_of(ops[0])) else {
                    return Err(internal("lea on a non-pointer"));
                };
                let zero = self.m.ctx.i64_type().const_zero();
                let i32t = self.m.ctx.i32_type();
                match w.kind(pointee).clone() {
                    TypeKind::Array { elem, len: None } => {
                        let et = self.m.types.value(w, elem)?;
                        let i = self.index64(ops[1])?;
                        unsafe { self.builder.build_in_bounds_gep(et, p, &[i], name) }
                            .map_err(llvm)?
                            .into()
                    }
                    TypeKind::Array { .. } => {
                        let at = self.m.types.value(w, pointee)?;
                        let i = self.index64(ops[1])?;
                        unsafe { self.builder.build_in_bounds_gep(at, p, &[zero, i], name) }
                            .map_err(llvm)?
                            .into()
                    }
                    _ => {
                        let st = self.m.types.value(w, pointee)?;
                        let i = w
                            .lit_bits(ops[1])
                            .ok_or_else(|| internal("field address with a computed index"))?;
                        let f = self
                            .m
                            .types
                            .field(w, pointee, i as usize)
                            .ok_or_else(|| unsupported("the address of a `mem` field"))?;
                        let f = i32t.const_int(f as u64, false);
                        unsafe {
                            self.builder
                                .build_in_bounds_gep(st, p, &[i32t.const_zero(), f], name)
                        }
                        .map_err(llvm)?
                        .into()
                    }
                }
            }
            Node::Slot => {
                self.value(ops[0])?;
                let pointee = effect_pointee(w, ty)?;
                let lt = self.m.types.value(w, pointee)?;
                self.alloca(lt, name)?.into()
            }
            Node::Alloc => {
                self.value(ops[0])?;
                let pointee = effect_pointee(w, ty)?;
                let TypeKind::Array { elem, .. } = *w.kind(pointee) else {
                    return Err(internal("alloc of a non-array"));
                };
                let et = self.m.types.value(w, elem)?;
                let n = self.index64(ops[1])?;
                let size = et.size_of().ok_or_else(|| internal("unsized element"))?;
                let bytes = self.builder.build_int_mul(n, size, "bytes").map_err(llvm)?;
                // Shared memory in host code: the CPU kernel's block's.
                let call = if program::allocates_shared(w, ty) {
                    let shared = self.runtime_fn("durin_cpu_shared", |c| {
                        c.ptr_type(AddressSpace::default())
                            .fn_type(&[c.i64_type().into()], false)
                    });
                    self.builder.build_call(shared, &[bytes.into()], name)
                } else {
                    let alloc = self.runtime_fn("anydsl_alloc", |c| {
                        c.ptr_type(AddressSpace::default())
                            .fn_type(&[c.i32_type().into(), c.i64_type().into()], false)
                    });
                    let dev = self.m.ctx.i32_type().const_zero();
                    self.builder
                        .build_call(alloc, &[dev.into(), bytes.into()], name)
                };
                call.map_err(llvm)?
                    .try_as_basic_value()
                    .basic()
                    .ok_or_else(|| internal("alloc returns nothing"))?
            }
            Node::Load => {
                self.value(ops[0])?;
                self.check_bounds(ops[1], d)?;
                let p = self.ptr(ops[1])?;
                let pointee = match w.types().components(ty) {
                    Some(c) if c.len() == 2 => c[1],
                    _ => return Err(internal("ill-typed load")),
                };
                let lt = self.m.types.value(w, pointee)?;
                match lt {
                    BasicTypeEnum::ArrayType(a)
                        if a.len() <= 16
                            && (a.get_element_type().is_float_type()
                                || a.get_element_type().is_int_type()) =>
                    {
                        self.load_elements(a, p, name)?
                    }
                    _ => self.builder.build_load(lt, p, name).map_err(llvm)?,
                }
            }
            Node::Store => {
                self.value(ops[0])?;
                self.check_bounds(ops[1], d)?;
                let p = self.ptr(ops[1])?;
                if let V::Val(x) = self.value(ops[2])? {
                    self.builder.build_store(p, x).map_err(llvm)?;
                }
                return Ok(V::Mem);
            }
            Node::Known => {
                let known = !w.has_params(ops[0]);
                self.m.ctx.bool_type().const_int(known as u64, false).into()
            }
            Node::Run | Node::Hlt => return self.value(ops[0]),
        };
        Ok(V::Val(v))
    }

    fn insert_value(
        &self,
        agg: BasicValueEnum<'ctx>,
        x: BasicValueEnum<'ctx>,
        i: u32,
        name: &str,
    ) -> R<BasicValueEnum<'ctx>> {
        let r = match agg {
            BasicValueEnum::StructValue(s) => self.builder.build_insert_value(s, x, i, name),
            BasicValueEnum::ArrayValue(a) => self.builder.build_insert_value(a, x, i, name),
            _ => return Err(internal("insert into a scalar")),
        };
        Ok(r.map_err(llvm)?.as_basic_value_enum())
    }

    fn extract(&mut self, agg_def: Def, index: Def, name: &str) -> R<V<'ctx>> {
        let w = self.w();
        let aggty = w.type_of(agg_def);
        // An effect's result is the pair (mem, value): the value is what we keep for it.
        if matches!(w.node(agg_def), Node::Slot | Node::Alloc | Node::Load) {
            let v = self.value(agg_def)?;
            return Ok(if w.lit_bits(index) == Some(0) {
                V::Mem
            } else {
                v
            });
        }
        let agg = self.val(agg_def)?;
        let ex = |s: &Self, agg: BasicValueEnum<'ctx>, i: u32| -> R<BasicValueEnum<'ctx>> {
            match agg {
                BasicValueEnum::StructValue(v) => s.builder.build_extract_value(v, i, name),
                BasicValueEnum::ArrayValue(v) => s.builder.build_extract_value(v, i, name),
                _ => return Err(internal("extract from a scalar")),
            }
            .map_err(llvm)
        };
        match (w.lit_bits(index), w.kind(aggty)) {
            (Some(i), TypeKind::Array { .. }) => Ok(V::Val(ex(self, agg, i as u32)?)),
            (Some(i), _) => match self.m.types.field(w, aggty, i as usize) {
                Some(f) => Ok(V::Val(ex(self, agg, f)?)),
                None => Ok(V::Mem),
            },
            (None, TypeKind::Array { elem, .. }) => {
                let et = self.m.types.value(w, *elem)?;
                let lt = agg.get_type();
                let tmp = self.alloca(lt, "dyn")?;
                let i = self.index64(index)?;
                let b = &self.builder;
                b.build_store(tmp, agg).map_err(llvm)?;
                let zero = self.m.ctx.i64_type().const_zero();
                let p = unsafe { b.build_in_bounds_gep(lt, tmp, &[zero, i], "") }.map_err(llvm)?;
                Ok(V::Val(b.build_load(et, p, name).map_err(llvm)?))
            }
            (None, _) => Err(internal("computed index into a tuple")),
        }
    }

    fn arith(
        &mut self,
        op: ArithOp,
        ty: Type,
        a: Def,
        b: Def,
        name: &str,
    ) -> R<BasicValueEnum<'ctx>> {
        let p = self.prim(ty)?;
        let (x, y) = (self.val(a)?, self.val(b)?);
        if let Prim::Float { .. } = p {
            let (x, y) = (x.into_float_value(), y.into_float_value());
            let bd = &self.builder;
            let r = match op {
                ArithOp::Add => bd.build_float_add(x, y, name),
                ArithOp::Sub => bd.build_float_sub(x, y, name),
                ArithOp::Mul => bd.build_float_mul(x, y, name),
                ArithOp::Div => bd.build_float_div(x, y, name),
                ArithOp::Rem => bd.build_float_rem(x, y, name),
                _ => return Err(internal("bit operation on floats")),
            };
            return Ok(r.map_err(llvm)?.into());
        }
        let (x, y) = (x.into_int_value(), y.into_int_value());
        let signed = matches!(p, Prim::Int { signed: true, .. });
        let width = x.get_type().get_bit_width();
        let r = match op {
            ArithOp::Add => self.builder.build_int_add(x, y, name),
            ArithOp::Sub => self.builder.build_int_sub(x, y, name),
            ArithOp::Mul => self.builder.build_int_mul(x, y, name),
            ArithOp::And => self.builder.build_and(x, y, name),
            ArithOp::Or => self.builder.build_or(x, y, name),
            ArithOp::Xor => self.builder.build_xor(x, y, name),
            ArithOp::Shl | ArithOp::Shr => {
                // The amount is taken modulo the width, as in the interpreter.
                let mask = x.get_type().const_int(width as u64 - 1, false);
                let n = self.builder.build_and(y, mask, "").map_err(llvm)?;
                match (op, signed) {
                    (ArithOp::Shl, _) => self.builder.build_left_shift(x, n, name),
                    (_, s) => self.builder.build_right_shift(x, n, s, name),
                }
            }
            ArithOp::Div | ArithOp::Rem => return self.division(op, signed, x, y, name),
        };
        Ok(r.map_err(llvm)?.into())
    }

    /// Integer division and remainder: division by zero is a run-time error; the signed
    /// minimum divided by -1 wraps (its remainder is 0), as in the interpreter.
    fn division(
        &mut self,
        op: ArithOp,
        signed: bool,
        x: IntValue<'ctx>,
        y: IntValue<'ctx>,
        name: &str,
    ) -> R<BasicValueEnum<'ctx>> {
        let it = x.get_type();
        let known = y.get_zero_extended_constant();
        if known != Some(0) && known.is_some() {
            // Nothing to check.
        } else {
            let zero = self
                .builder
                .build_int_compare(IntPredicate::EQ, y, it.const_zero(), "")
                .map_err(llvm)?;
            let trap = self.trap_block()?;
            let ok = self.m.ctx.append_basic_block(self.func, "div.ok");
            self.builder
                .build_conditional_branch(zero, trap, ok)
                .map_err(llvm)?;
            self.builder.position_at_end(ok);
        }
        let b = &self.builder;
        if !signed {
            return Ok(match op {
                ArithOp::Div => b.build_int_unsigned_div(x, y, name),
                _ => b.build_int_unsigned_rem(x, y, name),
            }
            .map_err(llvm)?
            .into());
        }
        let minus_one = it.const_all_ones();
        let is_m1 = b
            .build_int_compare(IntPredicate::EQ, y, minus_one, "")
            .map_err(llvm)?;
        let safe = b
            .build_select(is_m1, it.const_int(1, false), y, "")
            .map_err(llvm)?
            .into_int_value();
        let (q, special) = match op {
            ArithOp::Div => (
                b.build_int_signed_div(x, safe, "").map_err(llvm)?,
                b.build_int_neg(x, "").map_err(llvm)?,
            ),
            _ => (
                b.build_int_signed_rem(x, safe, "").map_err(llvm)?,
                it.const_zero(),
            ),
        };
        b.build_select(is_m1, special, q, name).map_err(llvm)
    }

    /// With bounds checks: checks every array index on the way from the accessed pointer
    /// `ptr` (a chain of `lea`s) to its base, for the access `at`.
    fn check_bounds(&mut self, ptr: Def, at: Def) -> R<()> {
        let Some(sources) = self.m.bounds_checks else {
            return Ok(());
        };
        let w = self.w();
        let i64t = self.m.ctx.i64_type();
        for a in array_indices(w, ptr) {
            let (base, index, elem, len) = (a.base, a.index, a.elem, a.len);
            // In library code, the program's call that code was specialized for first.
            let expanded = w.expansion_calls(w.jump_place(self.current).1);
            let place = sources.place_in_program(w.loc(at).or(w.loc(a.lea)), &expanded);
            let i = self.index64(index)?;
            let place = self
                .builder
                .build_global_string_ptr(&place, "place")
                .map_err(llvm)?
                .as_pointer_value();
            let ptr_t = self.m.ctx.ptr_type(AddressSpace::default());
            match len {
                Some(n) => {
                    let n = i64t.const_int(n, false);
                    let inside = self
                        .builder
                        .build_int_compare(IntPredicate::ULT, i, n, "")
                        .map_err(llvm)?;
                    self.index_guard(inside, i, n, place)?;
                }
                None => {
                    // The room around the base, then an inline comparison. The room
                    // of a pointer does not change while its allocation lives (and a
                    // pointer used after its release is not checked), so the lookup is
                    // a pure function for LLVM, which hoists it out of loops and
                    // computes it once per pointer.
                    let b = self.ptr(base)?;
                    let et = self.m.types.value(w, elem)?;
                    let size = et.size_of().ok_or_else(|| internal("unsized element"))?;
                    let room_t = self.m.ctx.struct_type(&[i64t.into(), i64t.into()], false);
                    let room_fn = self.runtime_fn("durin_index_room", |_| {
                        room_t.fn_type(&[ptr_t.into(), i64t.into()], false)
                    });
                    mark(
                        self.m.ctx,
                        room_fn,
                        &[
                            ("nounwind", 0),
                            ("willreturn", 0),
                            ("speculatable", 0),
                            ("memory", NO_MEMORY),
                        ],
                    );
                    let room = self
                        .builder
                        .build_call(room_fn, &[b.into(), size.into()], "room")
                        .map_err(llvm)?
                        .try_as_basic_value()
                        .basic()
                        .ok_or_else(|| internal("durin_index_room returns nothing"))?
                        .into_struct_value();
                    let bld = &self.builder;
                    let before = bld
                        .build_extract_value(room, 0, "before")
                        .map_err(llvm)?
                        .into_int_value();
                    let from = bld
                        .build_extract_value(room, 1, "from")
                        .map_err(llvm)?
                        .into_int_value();
                    let zero = i64t.const_zero();
                    let up = bld
                        .build_int_compare(IntPredicate::SLT, i, from, "")
                        .map_err(llvm)?;
                    let neg = bld.build_int_sub(zero, i, "").map_err(llvm)?;
                    let down = bld
                        .build_int_compare(IntPredicate::ULE, neg, before, "")
                        .map_err(llvm)?;
                    let nonneg = bld
                        .build_int_compare(IntPredicate::SGE, i, zero, "")
                        .map_err(llvm)?;
                    let inside = bld
                        .build_select(nonneg, up, down, "")
                        .map_err(llvm)?
                        .into_int_value();
                    self.index_guard(inside, i, from, place)?;
                }
            }
        }
        Ok(())
    }

    /// Continues where `inside` holds; elsewhere stops with `durin_index_error(i, len,
    /// place)`.
    fn index_guard(
        &mut self,
        inside: IntValue<'ctx>,
        i: IntValue<'ctx>,
        len: IntValue<'ctx>,
        place: PointerValue<'ctx>,
    ) -> R<()> {
        let (ok, bad) = (
            self.m.ctx.append_basic_block(self.func, "index.ok"),
            self.m.ctx.append_basic_block(self.func, "index.bad"),
        );
        self.builder
            .build_conditional_branch(inside, ok, bad)
            .map_err(llvm)?;
        self.builder.position_at_end(bad);
        let ptr_t = self.m.ctx.ptr_type(AddressSpace::default());
        let err = self.runtime_fn("durin_index_error", |c| {
            c.void_type().fn_type(
                &[c.i64_type().into(), c.i64_type().into(), ptr_t.into()],
                false,
            )
        });
        // It never returns; it is a side effect LLVM must keep (an attribute such as
        // `memory(read)` would let it drop the call).
        mark(
            self.m.ctx,
            err,
            &[("noreturn", 0), ("nounwind", 0), ("cold", 0)],
        );
        self.builder
            .build_call(err, &[i.into(), len.into(), place.into()], "")
            .map_err(llvm)?;
        self.builder.build_unreachable().map_err(llvm)?;
        self.builder.position_at_end(ok);
        Ok(())
    }

    /// Stops the program with run-time error `text` (the runtime's `durin_runtime_error`),
    /// ending the current block.
    fn runtime_error(&mut self, text: &str, name: &str) -> R<()> {
        let err = self.runtime_fn("durin_runtime_error", |c| {
            c.void_type()
                .fn_type(&[c.ptr_type(AddressSpace::default()).into()], false)
        });
        let msg = self
            .builder
            .build_global_string_ptr(text, name)
            .map_err(llvm)?;
        self.builder
            .build_call(err, &[msg.as_pointer_value().into()], "")
            .map_err(llvm)?;
        self.builder.build_unreachable().map_err(llvm)?;
        Ok(())
    }

    /// The block that stops the program with a division by zero at the division being
    /// computed (one per place).
    fn trap_block(&mut self) -> R<BasicBlock<'ctx>> {
        let text = program::division_error_text(self.w(), self.m.places, self.at, self.current);
        if let Some(&bb) = self.trap_blocks.get(&text) {
            return Ok(bb);
        }
        let here = self.builder.get_insert_block();
        let bb = self.m.ctx.append_basic_block(self.func, "div.zero");
        self.builder.position_at_end(bb);
        self.runtime_error(&text, "msg.div")?;
        if let Some(h) = here {
            self.builder.position_at_end(h);
        }
        self.trap_blocks.insert(text, bb);
        Ok(bb)
    }

    fn runtime_fn(
        &self,
        name: &str,
        ty: impl FnOnce(&'ctx Context) -> inkwell::types::FunctionType<'ctx>,
    ) -> FunctionValue<'ctx> {
        self.m.module.get_function(name).unwrap_or_else(|| {
            self.m
                .module
                .add_function(name, ty(self.m.ctx), Some(Linkage::External))
        })
    }

    fn conv(&mut self, x: Def, to: Type, name: &str) -> R<BasicValueEnum<'ctx>> {
        let w = self.w();
        let v = self.val(x)?;
        let lt = self.m.types.value(w, to)?;
        let b = &self.builder;
        let i64t = self.m.ctx.i64_type();
        // A pointer to an integer and back, through 64 bits: an integer widens by its sign.
        if let TypeKind::Ptr { .. } = w.kind(w.type_of(x)) {
            let wide = b
                .build_ptr_to_int(v.into_pointer_value(), i64t, name)
                .map_err(llvm)?;
            let n = b.build_int_truncate_or_bit_cast(wide, lt.into_int_type(), name);
            return Ok(n.map_err(llvm)?.into());
        }
        if let TypeKind::Ptr { .. } = w.kind(to) {
            let signed = matches!(self.prim(w.type_of(x))?, Prim::Int { signed: true, .. });
            let wide = b.build_int_cast_sign_flag(v.into_int_value(), i64t, signed, name);
            let p = b.build_int_to_ptr(wide.map_err(llvm)?, lt.into_pointer_type(), name);
            return Ok(p.map_err(llvm)?.into());
        }
        let (from_p, to_p) = (self.prim(w.type_of(x))?, self.prim(to)?);
        Ok(match (from_p, to_p) {
            (Prim::Bool, Prim::Bool) => v,
            (Prim::Float { .. }, Prim::Bool) => {
                let zero = v.into_float_value().get_type().const_zero();
                b.build_float_compare(FloatPredicate::UNE, v.into_float_value(), zero, name)
                    .map_err(llvm)?
                    .into()
            }
            (_, Prim::Bool) => {
                let zero = v.into_int_value().get_type().const_zero();
                b.build_int_compare(IntPredicate::NE, v.into_int_value(), zero, name)
                    .map_err(llvm)?
                    .into()
            }
            (Prim::Bool, Prim::Int { .. }) => b
                .build_int_z_extend(v.into_int_value(), lt.into_int_type(), name)
                .map_err(llvm)?
                .into(),
            (Prim::Bool, Prim::Float { .. }) => b
                .build_unsigned_int_to_float(v.into_int_value(), lt.into_float_type(), name)
                .map_err(llvm)?
                .into(),
            (Prim::Int { signed, .. }, Prim::Int { .. }) => b
                .build_int_cast_sign_flag(v.into_int_value(), lt.into_int_type(), signed, name)
                .map_err(llvm)?
                .into(),
            (Prim::Int { signed: true, .. }, Prim::Float { .. }) => b
                .build_signed_int_to_float(v.into_int_value(), lt.into_float_type(), name)
                .map_err(llvm)?
                .into(),
            (Prim::Int { .. }, Prim::Float { .. }) => b
                .build_unsigned_int_to_float(v.into_int_value(), lt.into_float_type(), name)
                .map_err(llvm)?
                .into(),
            (Prim::Float { .. }, Prim::Int { signed, .. }) => {
                // Saturating, NaN to 0: as the interpreter converts.
                let which = if signed {
                    "llvm.fptosi.sat"
                } else {
                    "llvm.fptoui.sat"
                };
                let f = Intrinsic::find(which)
                    .and_then(|i| i.get_declaration(self.m.module, &[lt, v.get_type()]))
                    .ok_or_else(|| internal(format!("no intrinsic {which}")))?;
                self.builder
                    .build_call(f, &[v.into()], name)
                    .map_err(llvm)?
                    .try_as_basic_value()
                    .basic()
                    .ok_or_else(|| internal("conversion returns nothing"))?
            }
            (Prim::Float { bits: a }, Prim::Float { bits: c }) => {
                if a == c {
                    v
                } else {
                    b.build_float_cast(v.into_float_value(), lt.into_float_type(), name)
                        .map_err(llvm)?
                        .into()
                }
            }
        })
    }

    /// Ends the current block with a jump to `callee` with `args` (defs and their values).
    fn jump(&mut self, callee: Def, args: &[Def], vals: &[V<'ctx>]) -> R<()> {
        let w = self.w();
        // The function's own return point.
        if let Node::Param(i) = w.node(callee) {
            let owner = w.ops(callee)[0];
            let sig = &self.m.functions[&self.entry].1;
            if owner == self.entry
                && sig.ret.is_some()
                && i as usize == param_types(w, owner).len() - 1
            {
                return self.ret(vals);
            }
            return Err(unsupported(
                "a jump to a continuation received as a parameter (closure elimination leaves none)",
            ));
        }
        if let Some(bb) = self.block_of(callee) {
            return self.branch(callee, bb, vals);
        }
        if w.node(callee) == Node::Select {
            let ops = w.ops(callee).to_vec();
            let c = self.int(ops[0])?;
            // Straight to a block that takes no values; otherwise through a new block that
            // makes the jump (passing values, returning or calling).
            let mut targets = Vec::new();
            for (k, name) in [(ops[1], "then"), (ops[2], "else")] {
                let direct = self
                    .block_of(k)
                    .filter(|_| self.phis[&k].iter().all(Option::is_none));
                targets.push(match direct {
                    Some(bb) => (bb, None),
                    None => (self.m.ctx.append_basic_block(self.func, name), Some(k)),
                });
            }
            let br = self
                .builder
                .build_conditional_branch(c, targets[0].0, targets[1].0)
                .map_err(llvm)?;
            for &k in &ops[1..] {
                self.hint_loop(br, k);
            }
            for (bb, through) in targets {
                if let Some(k) = through {
                    self.builder.position_at_end(bb);
                    self.jump(k, args, vals)?;
                }
            }
            return Ok(());
        }
        if w.node(callee) == Node::Bottom {
            // Such as a `match`'s end past exhaustive arms: an error, as in Cranelift's code
            // and the interpreter, should it ever run.
            return self.runtime_error("a jump to an undefined continuation", "msg.bot");
        }
        self.call(callee, args, vals)
    }

    fn branch(&mut self, k: Def, bb: BasicBlock<'ctx>, vals: &[V<'ctx>]) -> R<()> {
        let from = self.builder.get_insert_block().expect("positioned");
        for (phi, v) in self.phis[&k].iter().zip(vals) {
            if let (Some(phi), V::Val(v)) = (phi, v) {
                phi.add_incoming(&[(v, from)]);
            }
        }
        let br = self.builder.build_unconditional_branch(bb).map_err(llvm)?;
        self.hint_loop(br, k);
        Ok(())
    }

    /// Attaches the vectorization hint of loop header `target` to `br` if `br` is one of
    /// the loop's back edges: `!llvm.loop !{self, vectorize.enable, vectorize.width,
    /// parallel_accesses}` (the loop's iterations do not depend on each other).
    fn hint_loop(&mut self, br: inkwell::values::InstructionValue<'ctx>, target: Def) {
        let Some(&width) = self.vectorize.get(&target) else {
            return;
        };
        if !self.back_edges.contains(&(self.current, target)) {
            return;
        }
        if let (Some(latch), Some(&header)) = (br.get_parent(), self.blocks.get(&target)) {
            self.parallel.push((latch, header));
        }
        let group = self.access_group();
        use inkwell::llvm_sys::{core, debuginfo, prelude::LLVMMetadataRef};
        use inkwell::values::AsValueRef;
        let ctx = self.m.ctx.raw();
        let i1 = self.m.ctx.bool_type().const_int(1, false);
        let w32 = self.m.ctx.i32_type().const_int(width as u64, false);
        // SAFETY: plain LLVM C API calls on live objects of this context; the temporary
        // node is replaced by the loop node itself (the self-reference LLVM requires).
        unsafe {
            let pair = |key: &str, v: LLVMMetadataRef| {
                let mut ops = [
                    core::LLVMMDStringInContext2(ctx, key.as_ptr().cast(), key.len()),
                    v,
                ];
                core::LLVMMDNodeInContext2(ctx, ops.as_mut_ptr(), 2)
            };
            let enable = pair(
                "llvm.loop.vectorize.enable",
                core::LLVMValueAsMetadata(i1.as_value_ref()),
            );
            let width = pair(
                "llvm.loop.vectorize.width",
                core::LLVMValueAsMetadata(w32.as_value_ref()),
            );
            let parallel = pair(
                "llvm.loop.parallel_accesses",
                core::LLVMValueAsMetadata(group.as_value_ref()),
            );
            let tmp = debuginfo::LLVMTemporaryMDNode(ctx, std::ptr::null_mut(), 0);
            let mut ops = [tmp, enable, width, parallel];
            let node = core::LLVMMDNodeInContext2(ctx, ops.as_mut_ptr(), 4);
            debuginfo::LLVMMetadataReplaceAllUsesWith(tmp, node);
            let kind = self.m.ctx.get_kind_id("llvm.loop");
            core::LLVMSetMetadata(
                br.as_value_ref(),
                kind,
                core::LLVMMetadataAsValue(ctx, node),
            );
        }
    }

    /// The instructions of a memory hint (see [`crate::hints`]), with its results.
    fn hint(
        &mut self,
        name: &str,
        args: &[BasicMetadataValueEnum<'ctx>],
    ) -> R<Vec<BasicValueEnum<'ctx>>> {
        let arg = |i: usize| -> R<BasicValueEnum<'ctx>> {
            args.get(i)
                .and_then(|&a| BasicValueEnum::try_from(a).ok())
                .ok_or_else(|| internal(format!("`{name}` without argument {i}")))
        };
        let b = &self.builder;
        let ctx = self.m.ctx;
        match name {
            "durin_aligned" => {
                let (p, n) = (arg(0)?.into_pointer_value(), arg(1)?.into_int_value());
                let i64t = ctx.i64_type();
                let addr = b.build_ptr_to_int(p, i64t, "").map_err(llvm)?;
                let n = b
                    .build_int_z_extend_or_bit_cast(n, i64t, "")
                    .map_err(llvm)?;
                let mask = b
                    .build_int_sub(n, i64t.const_int(1, false), "")
                    .map_err(llvm)?;
                let low = b.build_and(addr, mask, "").map_err(llvm)?;
                let c = b
                    .build_int_compare(IntPredicate::EQ, low, i64t.const_zero(), "")
                    .map_err(llvm)?;
                Ok(vec![c.into()])
            }
            "durin_assume_aligned" => {
                // `assume(true) ["align"(p, n)]`: unlike an assumed condition, not dropped
                // where a branch on the same condition dominates it.
                let (p, n) = (arg(0)?, arg(1)?.into_int_value());
                let n = b
                    .build_int_z_extend_or_bit_cast(n, ctx.i64_type(), "")
                    .map_err(llvm)?;
                let assume = Intrinsic::find("llvm.assume")
                    .and_then(|i| i.get_declaration(self.m.module, &[]))
                    .ok_or_else(|| internal("no `llvm.assume`"))?;
                let bundle = inkwell::values::OperandBundle::create("align", &[p.into(), n.into()]);
                let yes = ctx.bool_type().const_int(1, false);
                b.build_direct_call_with_operand_bundles(assume, &[yes.into()], &[bundle], "")
                    .map_err(llvm)?;
                Ok(Vec::new())
            }
            "durin_store_stream_f32" => {
                let (p, v) = (arg(0)?.into_pointer_value(), arg(1)?);
                let st = b.build_store(p, v).map_err(llvm)?;
                let marker = crate::hints::stream_marker(ctx, self.m.module);
                st.set_metadata(marker, ctx.get_kind_id("alias.scope"))
                    .map_err(|e| internal(format!("a streaming store's marker: {e}")))?;
                Ok(Vec::new())
            }
            "durin_shm_stage" | "durin_shm_keep" | "durin_launch_note" => Ok(Vec::new()),
            "durin_prefetch" => {
                // `llvm.prefetch(p, read, the highest locality, data)`.
                let p = arg(0)?;
                let prefetch = Intrinsic::find("llvm.prefetch")
                    .and_then(|i| i.get_declaration(self.m.module, &[p.get_type()]))
                    .ok_or_else(|| internal("no `llvm.prefetch`"))?;
                let i32t = ctx.i32_type();
                let (rw, locality, data) = (
                    i32t.const_zero(),
                    i32t.const_int(3, false),
                    i32t.const_int(1, false),
                );
                b.build_call(
                    prefetch,
                    &[p.into(), rw.into(), locality.into(), data.into()],
                    "",
                )
                .map_err(llvm)?;
                Ok(Vec::new())
            }
            "durin_store_fence" => {
                if cfg!(target_arch = "x86_64") {
                    let sfence = self
                        .m
                        .module
                        .get_function("llvm.x86.sse.sfence")
                        .unwrap_or_else(|| {
                            let t = ctx.void_type().fn_type(&[], false);
                            self.m.module.add_function("llvm.x86.sse.sfence", t, None)
                        });
                    b.build_call(sfence, &[], "").map_err(llvm)?;
                } else {
                    b.build_fence(inkwell::AtomicOrdering::SequentiallyConsistent, false, "")
                        .map_err(llvm)?;
                }
                Ok(Vec::new())
            }
            _ => Err(internal(format!("`{name}` is not a hint"))),
        }
    }

    fn ret(&mut self, vals: &[V<'ctx>]) -> R<()> {
        let vs: Vec<BasicValueEnum<'ctx>> = vals
            .iter()
            .filter_map(|v| match v {
                V::Val(v) => Some(*v),
                V::Mem => None,
            })
            .collect();
        match vs.as_slice() {
            [] => self.builder.build_return(None),
            [one] => self.builder.build_return(Some(one)),
            many => self.builder.build_aggregate_return(many),
        }
        .map_err(llvm)?;
        Ok(())
    }

    /// A call of a top-level function, an import or a function pointer, then a jump to the
    /// return point it was given.
    fn call(&mut self, callee: Def, args: &[Def], vals: &[V<'ctx>]) -> R<()> {
        let w = self.w();
        let sig = program::call_signature(w, callee).map_err(unsupported)?;
        let mut call_args: Vec<BasicMetadataValueEnum<'ctx>> = Vec::new();
        let import = self.m.functions.contains_key(&callee) && w.body(callee).is_none();
        for (&i, &t) in sig.params.iter().zip(&sig.param_types) {
            match vals[i] {
                // Imports take tuples field by field (see `Types::import_function`).
                V::Val(BasicValueEnum::StructValue(s))
                    if import && matches!(w.kind(t), TypeKind::Tuple(_)) =>
                {
                    for f in 0..s.get_type().count_fields() {
                        let x = self.builder.build_extract_value(s, f, "").map_err(llvm)?;
                        call_args.push(x.into());
                    }
                }
                V::Val(v) => call_args.push(v.into()),
                V::Mem => return Err(internal("a `mem` token passed as a value")),
            }
        }
        let name = w.name(callee).unwrap_or("");
        if name == VECTORIZE_HINT && w.body(callee).is_none() {
            // Not a call: the loop this block heads gets the hint on its back edges.
            let width = sig
                .params
                .first()
                .and_then(|&i| w.lit_bits(args[i]))
                .filter(|&n| (1..=1024).contains(&n))
                .ok_or_else(|| {
                    unsupported(
                        "a vector length that is not a constant from 1 to 1024 (`vectorize` needs one known at compile time)",
                    )
                })?;
            self.vectorize.insert(self.current, width as u32);
            let ret_point = *args
                .last()
                .ok_or_else(|| internal("call without a return point"))?;
            return self.jump(ret_point, &[], &[V::Mem]);
        }
        if crate::hints::HINTS.contains(&name) && import {
            let results = self.hint(name, &call_args)?;
            let ret_types = sig.ret.clone().unwrap_or_default();
            return self.return_to(args, &ret_types, results);
        }
        let site = match self.m.functions.get(&callee) {
            Some((f, _)) => {
                let f = match w.body(callee) {
                    None => self.m.math_intrinsic(name, &sig).unwrap_or(*f),
                    Some(_) => *f,
                };
                let site = self.builder.build_call(f, &call_args, "").map_err(llvm)?;
                site.set_call_convention(f.get_call_conventions());
                if f.get_call_conventions() == TAILCC
                    && self.func.get_call_conventions() == TAILCC
                    && self.tail_calls
                    && returned_in_registers(f.get_type().get_return_type())
                    && program::is_tail_call(w, self.entry, callee, args)
                {
                    // A guaranteed tail call: recursion through it takes no stack.
                    site.set_tail_call_kind(
                        inkwell::llvm_sys::LLVMTailCallKind::LLVMTailCallKindMustTail,
                    );
                    match site.try_as_basic_value().basic() {
                        Some(v) => self.builder.build_return(Some(&v)),
                        None => self.builder.build_return(None),
                    }
                    .map_err(llvm)?;
                    return Ok(());
                }
                site
            }
            None => {
                let fty = self.m.types.function(w, &sig)?;
                let fp = self.ptr(callee)?;
                self.builder
                    .build_indirect_call(fty, fp, &call_args, "")
                    .map_err(llvm)?
            }
        };
        let Some(ret_types) = sig.ret.clone() else {
            self.builder.build_unreachable().map_err(llvm)?;
            return Ok(());
        };
        let result = site.try_as_basic_value().basic();
        let nresults = ret_types.iter().filter(|&&t| !w.types().is_mem(t)).count();
        let mut results = Vec::new();
        match (nresults, result) {
            (0, _) => {}
            (1, Some(r)) => results.push(r),
            (_, Some(BasicValueEnum::StructValue(s))) => {
                for i in 0..nresults {
                    results.push(
                        self.builder
                            .build_extract_value(s, i as u32, "")
                            .map_err(llvm)?,
                    );
                }
            }
            _ => return Err(internal("call results do not match the return point")),
        }
        self.return_to(args, &ret_types, results)
    }

    /// Jumps to the return point of a call (the last of `args`), whose parameters are
    /// `ret_types`, with the call's `results` for its value parameters.
    fn return_to(
        &mut self,
        args: &[Def],
        ret_types: &[Type],
        results: Vec<BasicValueEnum<'ctx>>,
    ) -> R<()> {
        let w = self.w();
        let mut next = results.into_iter();
        let ret_vals: Vec<V<'ctx>> = ret_types
            .iter()
            .map(|&t| match w.types().is_mem(t) {
                true => Ok(V::Mem),
                false => (next.next().map(V::Val))
                    .ok_or_else(|| internal("call results do not match the return point")),
            })
            .collect::<R<_>>()?;
        let ret_point = *args
            .last()
            .ok_or_else(|| internal("call without a return point"))?;
        self.jump(ret_point, &[], &ret_vals)
    }
}

/// LLVM's `tailcc`: like `fastcc`, and calls in tail position marked `musttail` are
/// guaranteed tail calls even when the two prototypes differ.
const TAILCC: u32 = 18;

/// Whether a function's result of type `ret` (`None`: no result) comes back in registers:
/// at most two integers or pointers and two floating-point values (no vector), what every
/// 64-bit C convention returns in registers, and `tailcc` with them.
/// A larger result is returned through memory the caller provides, and LLVM stops with
/// "failed to perform tail call elimination" on a `musttail` call that returns one (on
/// x86-64, from four integers on): such a call stays an ordinary call.
fn returned_in_registers(ret: Option<BasicTypeEnum<'_>>) -> bool {
    // Counts the scalars of `t`, false from one too many on (or a kind not counted).
    fn count(t: BasicTypeEnum<'_>, ints: &mut u32, floats: &mut u32) -> bool {
        match t {
            BasicTypeEnum::IntType(i) if i.get_bit_width() <= 64 => *ints += 1,
            BasicTypeEnum::PointerType(_) => *ints += 1,
            BasicTypeEnum::FloatType(_) => *floats += 1,
            BasicTypeEnum::StructType(st) => {
                return st
                    .get_field_types()
                    .into_iter()
                    .all(|f| count(f, ints, floats))
            }
            BasicTypeEnum::ArrayType(a) => {
                let elem = a.get_element_type();
                return (0..a.len()).all(|_| count(elem, ints, floats));
            }
            _ => return false,
        }
        *ints <= 2 && *floats <= 2
    }
    ret.is_none_or(|t| count(t, &mut 0, &mut 0))
}

/// The pointee of an effect's result type, or an internal error.
fn effect_pointee(w: &World, ty: Type) -> R<Type> {
    program::effect_pointee(w, ty).ok_or_else(|| internal("ill-typed effect"))
}
