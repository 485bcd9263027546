//! IR types as LLVM types.
//!
//! `mem` has no LLVM type: values of it carry no data. Tuples and structs drop their `mem`
//! components (see [`Types::field`]); structs become named LLVM structs, tuples literal ones.
//! Continuation values (function pointers) and all pointers are the opaque `ptr`.

use crate::unsupported;
use durin_diag::Diagnostic;
use durin_ir::{Type, TypeKind, World};
use inkwell::context::Context;
use inkwell::types::{BasicType, BasicTypeEnum, FunctionType, StructType};
use inkwell::AddressSpace;
use rustc_hash::FxHashMap;

/// The LLVM types of a world's types, made on demand.
pub struct Types<'ctx> {
    ctx: &'ctx Context,
    cache: FxHashMap<Type, Option<BasicTypeEnum<'ctx>>>,
    structs: FxHashMap<Type, StructType<'ctx>>,
}

impl<'ctx> Types<'ctx> {
    /// An empty cache for `ctx`.
    pub fn new(ctx: &'ctx Context) -> Self {
        Types {
            ctx,
            cache: FxHashMap::default(),
            structs: FxHashMap::default(),
        }
    }

    /// The LLVM type of values of `t`; `None` for `mem` (no data).
    pub fn get(&mut self, w: &World, t: Type) -> Result<Option<BasicTypeEnum<'ctx>>, Diagnostic> {
        if let Some(&l) = self.cache.get(&t) {
            return Ok(l);
        }
        let ctx = self.ctx;
        let l: Option<BasicTypeEnum<'ctx>> = match w.kind(t) {
            TypeKind::Mem => None,
            TypeKind::Bool => Some(ctx.bool_type().into()),
            TypeKind::Int { bits, .. } => Some(int_type(ctx, *bits as u32).into()),
            TypeKind::Float { bits: 16 } => Some(ctx.f16_type().into()),
            TypeKind::Float { bits: 32 } => Some(ctx.f32_type().into()),
            TypeKind::Float { .. } => Some(ctx.f64_type().into()),
            TypeKind::Ptr { .. } | TypeKind::Cont(_) => {
                Some(ctx.ptr_type(AddressSpace::default()).into())
            }
            TypeKind::Tuple(ts) => {
                let fields = self.fields(w, ts)?;
                Some(ctx.struct_type(&fields, false).into())
            }
            TypeKind::Struct(_) => {
                let decl = w
                    .types()
                    .struct_decl(t)
                    .expect("struct type has a declaration");
                let named = ctx.opaque_struct_type(&decl.name);
                self.structs.insert(t, named);
                self.cache.insert(t, Some(named.into()));
                let ts: Vec<Type> = decl.fields.iter().map(|f| f.1).collect();
                let fields = self.fields(w, &ts)?;
                named.set_body(&fields, false);
                Some(named.into())
            }
            TypeKind::Array { elem, len: Some(n) } => {
                let e = self.value(w, *elem)?;
                let n = u32::try_from(*n).map_err(|_| {
                    unsupported(format!("an array of {n} elements (at most 2^32 - 1)"))
                })?;
                Some(e.array_type(n).into())
            }
            TypeKind::Array { len: None, .. } => {
                return Err(unsupported(
                    "a value of an array type without a length (only pointers to it)",
                ))
            }
        };
        self.cache.insert(t, l);
        Ok(l)
    }

    /// The LLVM type of `t`, which must carry data.
    pub fn value(&mut self, w: &World, t: Type) -> Result<BasicTypeEnum<'ctx>, Diagnostic> {
        self.get(w, t)?
            .ok_or_else(|| unsupported("a `mem` token where a value is expected".to_string()))
    }

    /// What a pointer to `t` indexes: the element type for arrays (of either kind).
    pub fn pointee(&mut self, w: &World, t: Type) -> Result<BasicTypeEnum<'ctx>, Diagnostic> {
        match w.kind(t) {
            TypeKind::Array { elem, len: None } => self.value(w, *elem),
            _ => self.value(w, t),
        }
    }

    fn fields(&mut self, w: &World, ts: &[Type]) -> Result<Vec<BasicTypeEnum<'ctx>>, Diagnostic> {
        let mut out = Vec::new();
        for &c in ts {
            if let Some(l) = self.get(w, c)? {
                out.push(l);
            }
        }
        Ok(out)
    }

    /// The LLVM field index of component `i` of tuple or struct type `t`, or `None` when
    /// that component is a `mem`.
    pub fn field(&mut self, w: &World, t: Type, i: usize) -> Option<u32> {
        let comps = w.types().components(t)?;
        if w.types().is_mem(*comps.get(i)?) {
            return None;
        }
        Some(comps[..i].iter().filter(|&&c| !w.types().is_mem(c)).count() as u32)
    }

    /// The C type of an import: as [`Types::function`], with tuple parameters passed as
    /// their fields, one argument each (a closure `(code, environment)` becomes two
    /// pointers, as the runtime's `anydsl_parallel_for` takes it).
    pub fn import_function(
        &mut self,
        w: &World,
        sig: &durin_ir::analysis::program::Signature,
    ) -> Result<FunctionType<'ctx>, Diagnostic> {
        let f = self.function(w, sig)?;
        let mut params = Vec::new();
        for (&t, lt) in sig.param_types.iter().zip(f.get_param_types()) {
            match (w.kind(t), lt) {
                (TypeKind::Tuple(_), inkwell::types::BasicMetadataTypeEnum::StructType(s)) => {
                    params.extend(
                        s.get_field_types()
                            .into_iter()
                            .map(inkwell::types::BasicMetadataTypeEnum::from),
                    )
                }
                (_, lt) => params.push(lt),
            }
        }
        Ok(match f.get_return_type() {
            Some(r) => r.fn_type(&params, false),
            None => self.ctx.void_type().fn_type(&params, false),
        })
    }

    /// The LLVM function type of calling a continuation of type `t` (see
    /// [`durin_ir::analysis::program::Signature`]): value parameters in, the return point's values out
    /// (none: `void`; one: itself; several: a literal struct).
    pub fn function(
        &mut self,
        w: &World,
        sig: &durin_ir::analysis::program::Signature,
    ) -> Result<FunctionType<'ctx>, Diagnostic> {
        let mut params = Vec::new();
        for &p in &sig.param_types {
            params.push(self.value(w, p)?.into());
        }
        let results = sig.results(w);
        Ok(match results.as_slice() {
            [] => self.ctx.void_type().fn_type(&params, false),
            [one] => self.value(w, *one)?.fn_type(&params, false),
            many => {
                let mut fs = Vec::new();
                for &r in many {
                    fs.push(self.value(w, r)?);
                }
                self.ctx.struct_type(&fs, false).fn_type(&params, false)
            }
        })
    }
}

/// The LLVM integer type of `bits` bits (1, 8, 16, 32 or 64).
pub fn int_type(ctx: &Context, bits: u32) -> inkwell::types::IntType<'_> {
    match bits {
        1 => ctx.bool_type(),
        8 => ctx.i8_type(),
        16 => ctx.i16_type(),
        32 => ctx.i32_type(),
        _ => ctx.i64_type(),
    }
}
