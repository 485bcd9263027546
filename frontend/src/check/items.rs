//! Items: registration in modules, signatures, written types, and the driver that checks
//! every body.

use super::*;
use crate::ast::{AttrArg, ItemKind, TypeKind};
use crate::token::Literal;

impl<'a> Checker<'a> {
    /// Registers the items of one module (or block), reporting duplicates.
    pub(super) fn register_items(&mut self, m: ModId, items: &'a [ast::Item]) {
        for item in items {
            if let Some((name, r)) = self.register_item(m, item) {
                match (&item.kind, r) {
                    (ItemKind::Implicit(_), ItemRef::Fn(f)) => {
                        self.mods[m as usize].implicits.push(f)
                    }
                    _ => self.define(Some(m), name, r),
                }
            }
        }
    }

    /// Registers items of a block in the innermost local scope.
    pub(super) fn register_block_items(&mut self, items: impl Iterator<Item = &'a ast::Item>) {
        let m = self.cur_mod;
        for item in items {
            if let Some((name, r)) = self.register_item(m, item) {
                match (&item.kind, r) {
                    (ItemKind::Implicit(_), ItemRef::Fn(f)) => {
                        self.define_implicit(Local::Item(ItemRef::Fn(f)))
                    }
                    _ => self.define(None, name, r),
                }
            }
        }
    }

    fn define(&mut self, m: Option<ModId>, name: &'a ast::Ident, r: ItemRef) {
        if &*name.name == "_" {
            // `static _ = ...;` declares nothing that can be named.
            return;
        }
        match m {
            Some(m) => {
                if let Some((_, prev)) = self.mods[m as usize].items.get(&name.name) {
                    let prev = *prev;
                    let d = self
                        .error(
                            name.span,
                            format!("`{}` is defined more than once", name.name),
                        )
                        .with_label_message("redefined here")
                        .with_secondary(prev, "first defined here");
                    self.emit(d);
                    return;
                }
                self.mods[m as usize]
                    .items
                    .insert(name.name.clone(), (r, name.span));
            }
            None => {
                if let Some(s) = self.cx.scopes.last_mut() {
                    s.insert(name.name.clone(), Local::Item(r));
                }
            }
        }
    }

    fn register_item(
        &mut self,
        m: ModId,
        item: &'a ast::Item,
    ) -> Option<(&'a ast::Ident, ItemRef)> {
        for a in &item.attrs {
            if !matches!(&*a.name.name, "export" | "import") {
                let d = self
                    .error(a.name.span, format!("unknown attribute `{}`", a.name.name))
                    .with_note("durin knows `#[export]` and `#[import(cc = ..., name = ...)]`");
                self.emit(d);
            }
        }
        match &item.kind {
            ItemKind::Fn(f) | ItemKind::Implicit(f) => {
                let nested = !self.cx.fns.is_empty();
                let outer: Vec<Box<str>> =
                    self.cx.type_params.iter().map(|(n, _)| n.clone()).collect();
                let mut type_params = outer.clone();
                type_params.extend(f.type_params.iter().map(|i| i.name.clone()));
                self.fns.push(FnInfo {
                    name: f.name.name.clone(),
                    type_params,
                    outer_params: outer.len() as u32,
                    dom: TyTable::ERROR,
                    codom: TyTable::ERROR,
                    body: None,
                    linkage: Linkage::Internal,
                    nested,
                    params: (0, 0),
                    span: f.name.span,
                });
                self.fn_src.push(FnSource {
                    decl: f,
                    attrs: &item.attrs,
                    module: m,
                    state: SigState::Pending,
                });
                Some((&f.name, ItemRef::Fn((self.fns.len() - 1) as FnId)))
            }
            ItemKind::Struct {
                name,
                type_params,
                shape,
                ..
            } => {
                self.structs.push(StructInfo {
                    name: name.name.clone(),
                    type_params: type_params.iter().map(|i| i.name.clone()).collect(),
                    fields: Vec::new(),
                    field_index: FxHashMap::default(),
                    defaults: Vec::new(),
                    shape: *shape,
                    variant_of: None,
                    span: name.span,
                });
                self.struct_src.push((item, m, false));
                Some((name, ItemRef::Struct((self.structs.len() - 1) as DeclId)))
            }
            ItemKind::Enum {
                name,
                type_params,
                variants,
            } => {
                if variants.is_empty() {
                    self.err(name.span, format!("enum `{}` has no variants", name.name));
                }
                self.enums.push(EnumInfo {
                    name: name.name.clone(),
                    type_params: type_params.iter().map(|i| i.name.clone()).collect(),
                    variants: variants
                        .iter()
                        .map(|v| (v.name.name.clone(), None))
                        .collect(),
                    variant_index: index_by_name(variants.iter().map(|v| &v.name.name)),
                    span: name.span,
                });
                self.enum_src.push((item, m, false));
                Some((name, ItemRef::Enum((self.enums.len() - 1) as DeclId)))
            }
            ItemKind::TypeAlias {
                name,
                type_params,
                ty,
            } => {
                self.aliases.push(AliasSource {
                    name,
                    type_params,
                    ty,
                    module: m,
                    resolved: None,
                    resolving: false,
                });
                Some((name, ItemRef::Alias((self.aliases.len() - 1) as u32)))
            }
            ItemKind::Static { mutable, name, .. } => {
                self.statics.push(StaticInfo {
                    name: name.name.clone(),
                    ty: TyTable::ERROR,
                    mutable: *mutable,
                    init: None,
                    span: name.span,
                });
                self.static_src.push((item, m, SigState::Pending));
                Some((name, ItemRef::Static((self.statics.len() - 1) as StaticId)))
            }
            ItemKind::Mod { name, items } => {
                if !self.cx.fns.is_empty() {
                    self.err(name.span, "modules cannot be declared inside functions");
                    return None;
                }
                let sub = self.new_mod(Some(m));
                self.register_items(sub, items);
                Some((name, ItemRef::Mod(sub)))
            }
            ItemKind::Use { path, alias } => {
                let name = match alias {
                    Some(a) => a,
                    None => &path.segments.last()?.ident,
                };
                self.uses.push(UseSource {
                    path,
                    module: m,
                    resolved: None,
                    resolving: false,
                });
                Some((name, ItemRef::Use((self.uses.len() - 1) as u32)))
            }
            ItemKind::Error => None,
        }
    }

    // ----- types -------------------------------------------------------------------------

    /// `simd[elem * len]`, or the error type after reporting at `span` that `elem` is not a
    /// primitive or a pointer, or that `len` is zero.
    pub(super) fn simd_type(&mut self, elem: Ty, len: u64, span: Span) -> Ty {
        let e = self.resolve(elem);
        if !matches!(
            self.tys.kind(e),
            TyKind::Prim(_) | TyKind::Ptr { .. } | TyKind::Var(_) | TyKind::Error
        ) {
            let s = self.ty_str(e);
            self.err(
                span,
                format!(
                    "the elements of a `simd` vector are numbers, `bool`s or pointers, not `{s}`"
                ),
            );
            return TyTable::ERROR;
        }
        if len == 0 {
            self.err(span, "a `simd` vector has at least one element");
            return TyTable::ERROR;
        }
        self.tys.array(elem, Some(len), true)
    }

    /// The value of an array length: a literal, or an immutable static whose initializer
    /// is an integer constant (an error at `span` otherwise).
    pub(super) fn array_len(&mut self, n: &ast::ArrayLen, span: Span) -> Option<u64> {
        let p = match n {
            ast::ArrayLen::Lit(n) => return Some(*n),
            ast::ArrayLen::Path(p) => p,
        };
        let r = self.resolve_path_item(p)?;
        let r = self.deref_use(r, span)?;
        let value = match r {
            ItemRef::Static(s) => {
                let t = self.static_info(s, span);
                let info = &self.statics[s as usize];
                match (&info.init, info.mutable) {
                    (Some(init), false) if self.tys.is_int(t) => const_int(init),
                    _ => None,
                }
            }
            _ => None,
        };
        match value {
            Some(v) if v >= 0 => Some(v as u64),
            _ => {
                let name: Vec<&str> = p.segments.iter().map(|s| &*s.ident.name).collect();
                let name = name.join("::");
                let d = self
                    .error(span, format!("`{name}` is not a constant array length"))
                    .with_note("an array length is an integer literal or an immutable `static` initialized with one");
                self.emit(d);
                None
            }
        }
    }

    /// The type written as `t`, in the current scope.
    pub(super) fn resolve_type(&mut self, t: &ast::Type) -> Ty {
        self.resolve_type_in(t, false)
    }

    /// The type written as `t`; `pointee`: `t` is what a pointer points to, the one place
    /// where an array of unknown length (`[T]`, which has no size) may stand.
    fn resolve_type_in(&mut self, t: &ast::Type, pointee: bool) -> Ty {
        match &t.kind {
            TypeKind::Error => TyTable::ERROR,
            TypeKind::NoRet => TyTable::NORET,
            TypeKind::Tuple(ts) => {
                let ts = ts.iter().map(|t| self.resolve_type(t)).collect();
                self.tys.tuple(ts)
            }
            TypeKind::Array { elem, len, simd } => {
                let elem = self.resolve_type(elem);
                if *simd && len.is_none() {
                    self.err(t.span, "a `simd` type needs a length: `simd[T * N]`");
                    return TyTable::ERROR;
                }
                if len.is_none() && !pointee {
                    let s = self.ty_str(elem);
                    let d = self
                        .error(
                            t.span,
                            format!("an array of unknown length `[{s}]` has no size: it can only be pointed to"),
                        )
                        .with_note(format!("use a pointer, `&[{s}]` or `&mut [{s}]`, or give a length, `[{s} * N]`"));
                    self.emit(d);
                    return TyTable::ERROR;
                }
                let len = match len {
                    Some(n) => match self.array_len(n, t.span) {
                        Some(n) => Some(n),
                        None => return TyTable::ERROR,
                    },
                    None => None,
                };
                match (simd, len) {
                    (true, Some(n)) => self.simd_type(elem, n, t.span),
                    _ => self.tys.array(elem, len, false),
                }
            }
            TypeKind::Fn { param, ret } => {
                let dom = self.resolve_type(param);
                let codom = match ret {
                    Some(r) => self.resolve_type(r),
                    None => TyTable::NORET,
                };
                self.tys.func(dom, codom)
            }
            TypeKind::Ptr {
                mutable,
                addr_space,
                pointee,
            } => {
                let pointee = self.resolve_type_in(pointee, true);
                let space = addr_space.unwrap_or(0);
                if space > 5 {
                    self.err(
                        t.span,
                        format!("unknown address space {space} (durin knows 0 to 5)"),
                    );
                }
                self.tys.intern(TyKind::Ptr {
                    pointee,
                    mutable: *mutable,
                    space: space.min(5) as u32,
                })
            }
            TypeKind::Path(p) => self.resolve_type_path(p, t.span),
        }
    }

    fn resolve_type_path(&mut self, p: &ast::Path, span: Span) -> Ty {
        let last = p.segments.last().expect("paths have a segment");
        if p.segments.len() == 1 {
            let name = &last.ident.name;
            if let Some((_, t)) = self.cx.type_params.iter().rev().find(|(n, _)| n == name) {
                let t = *t;
                if !last.type_args.is_empty() {
                    self.err(
                        span,
                        format!("type parameter `{name}` takes no type arguments"),
                    );
                }
                return t;
            }
            if let Some(t) = prim_type(&mut self.tys, name) {
                return t;
            }
        }
        let Some(r) = self.resolve_path_item(p) else {
            return TyTable::ERROR;
        };
        let args: Vec<Ty> = last
            .type_args
            .iter()
            .map(|t| self.resolve_type(t))
            .collect();
        self.type_of_item(r, args, span, false)
    }

    /// The type an item names, applied to `args`; with `infer`, missing arguments become
    /// inference variables.
    pub(super) fn type_of_item(
        &mut self,
        r: ItemRef,
        mut args: Vec<Ty>,
        span: Span,
        infer: bool,
    ) -> Ty {
        let (n, what) = match r {
            ItemRef::Struct(d) => (self.structs[d as usize].type_params.len(), "struct"),
            ItemRef::Enum(d) => (self.enums[d as usize].type_params.len(), "enum"),
            ItemRef::Alias(a) => (self.aliases[a as usize].type_params.len(), "type alias"),
            _ => {
                self.err(span, "expected a type, found a value or module");
                return TyTable::ERROR;
            }
        };
        if args.is_empty() && infer {
            args = (0..n).map(|_| self.fresh_var()).collect();
        }
        if args.len() != n {
            self.err(
                span,
                format!(
                    "this {what} takes {n} type argument{}, but {} were given",
                    plural(n),
                    args.len()
                ),
            );
            return TyTable::ERROR;
        }
        match r {
            ItemRef::Struct(d) => self.tys.intern(TyKind::Struct(d, args)),
            ItemRef::Enum(d) => self.tys.intern(TyKind::Enum(d, args)),
            ItemRef::Alias(a) => {
                let t = self.alias_type(a);
                self.tys.subst(t, &args)
            }
            _ => TyTable::ERROR,
        }
    }

    fn alias_type(&mut self, a: u32) -> Ty {
        if let Some(t) = self.aliases[a as usize].resolved {
            return t;
        }
        let src = &self.aliases[a as usize];
        if src.resolving {
            let span = src.name.span;
            self.err(
                span,
                format!("type alias `{}` refers to itself", src.name.name),
            );
            return TyTable::ERROR;
        }
        let (ty, module, params) = (src.ty, src.module, src.type_params);
        self.aliases[a as usize].resolving = true;
        let t = self.in_item_cx(module, params, 0, |c| c.resolve_type(ty));
        self.aliases[a as usize].resolving = false;
        self.aliases[a as usize].resolved = Some(t);
        t
    }

    /// Runs `f` in the context of a top-level item of `module` with these type parameters.
    pub(super) fn in_item_cx<R>(
        &mut self,
        module: ModId,
        params: &[ast::Ident],
        first_param: u32,
        f: impl FnOnce(&mut Self) -> R,
    ) -> R {
        let saved_mod = std::mem::replace(&mut self.cur_mod, module);
        let saved_cx = std::mem::take(&mut self.cx);
        for (i, p) in params.iter().enumerate() {
            let t = self.tys.intern(TyKind::Param(first_param + i as u32));
            self.cx.type_params.push((p.name.clone(), t));
        }
        let r = f(self);
        self.cx = saved_cx;
        self.cur_mod = saved_mod;
        r
    }

    /// Fills in the fields of a struct (once).
    pub(super) fn struct_info(&mut self, d: DeclId) -> &StructInfo {
        if !self.struct_src[d as usize].2 {
            self.struct_src[d as usize].2 = true;
            let (item, module, _) = self.struct_src[d as usize];
            if let ItemKind::Struct {
                type_params,
                fields,
                ..
            } = &item.kind
            {
                let (fs, defaults) =
                    self.in_item_cx(module, type_params, 0, |c| c.field_types(fields));
                self.structs[d as usize].field_index = index_by_name(fs.iter().map(|f| &f.0));
                self.structs[d as usize].fields = fs;
                self.structs[d as usize].defaults = defaults;
            }
        }
        &self.structs[d as usize]
    }

    /// The names (the index as text for unnamed ones), types and default values of fields.
    fn field_types(
        &mut self,
        fields: &'a [ast::Field],
    ) -> (Vec<(Box<str>, Ty)>, Vec<Option<hir::Expr>>) {
        let mut fs: Vec<(Box<str>, Ty)> = Vec::new();
        let mut defaults = Vec::new();
        let mut named = rustc_hash::FxHashSet::default();
        for (i, f) in fields.iter().enumerate() {
            let ty = self.resolve_type(&f.ty);
            let name: Box<str> = match &f.name {
                Some(n) => n.name.clone(),
                None => i.to_string().into(),
            };
            if let Some(n) = &f.name {
                if !named.insert(&n.name) {
                    self.err(
                        n.span,
                        format!("field `{}` is declared more than once", n.name),
                    );
                }
            }
            let default = f.init.as_ref().map(|e| self.check_expr(e, ty));
            fs.push((name, ty));
            defaults.push(default);
        }
        (fs, defaults)
    }

    /// Fills in the payloads of an enum (once).
    pub(super) fn enum_info(&mut self, d: DeclId) -> &EnumInfo {
        if !self.enum_src[d as usize].2 {
            self.enum_src[d as usize].2 = true;
            let (item, module, _) = self.enum_src[d as usize];
            if let ItemKind::Enum {
                type_params,
                variants,
                ..
            } = &item.kind
            {
                let payloads = self.in_item_cx(module, type_params, 0, |c| {
                    variants
                        .iter()
                        .map(|v| match &v.payload {
                            ast::VariantPayload::None => Payload::None,
                            ast::VariantPayload::Tuple(t) => Payload::Tuple(c.resolve_type(t)),
                            ast::VariantPayload::Record(fs) => Payload::Record(c.field_types(fs)),
                        })
                        .collect::<Vec<_>>()
                });
                let params: Vec<Ty> = (0..type_params.len() as u32)
                    .map(|i| self.tys.intern(TyKind::Param(i)))
                    .collect();
                for (i, p) in payloads.into_iter().enumerate() {
                    let t = match p {
                        Payload::None => None,
                        Payload::Tuple(t) => Some(t),
                        // The fields of a record variant form a struct of their own.
                        Payload::Record((fields, defaults)) => {
                            let info = &self.enums[d as usize];
                            let s = StructInfo {
                                name: format!("{}::{}", info.name, info.variants[i].0).into(),
                                type_params: info.type_params.clone(),
                                defaults,
                                field_index: index_by_name(fields.iter().map(|f| &f.0)),
                                fields,
                                shape: ast::StructShape::Record,
                                variant_of: Some((d, i as u32)),
                                span: variants[i].span,
                            };
                            self.structs.push(s);
                            self.struct_src.push((item, module, true));
                            let sd = (self.structs.len() - 1) as DeclId;
                            Some(self.tys.intern(TyKind::Struct(sd, params.clone())))
                        }
                    };
                    self.enums[d as usize].variants[i].1 = t;
                }
            }
        }
        &self.enums[d as usize]
    }

    // ----- functions ---------------------------------------------------------------------

    /// Resolves the signature of `f` (and, when its return type is not written, checks its
    /// body to find it).
    pub(super) fn fn_sig(&mut self, f: FnId, use_span: Span) -> (Ty, Ty) {
        match self.fn_src[f as usize].state {
            SigState::Done | SigState::Resolving => {}
            SigState::Inferring => {
                let name = self.fns[f as usize].name.clone();
                let d = self
                    .error(
                        use_span,
                        format!("the return type of `{name}` is needed before it is known"),
                    )
                    .with_secondary(self.fns[f as usize].span, "declared here")
                    .with_note("recursive functions need a written return type: `-> T`");
                self.emit(d);
                return (self.fns[f as usize].dom, TyTable::ERROR);
            }
            SigState::Pending => {
                if self.fns[f as usize].nested {
                    // Nested functions get their signature when their block is entered.
                    return (self.fns[f as usize].dom, self.fns[f as usize].codom);
                }
                let module = self.fn_src[f as usize].module;
                let decl = self.fn_src[f as usize].decl;
                self.in_item_cx(module, &decl.type_params, 0, |c| c.resolve_fn_sig(f));
                if self.fns[f as usize].codom == TyTable::ERROR
                    && decl.ret.is_none()
                    && decl.body.is_some()
                {
                    self.in_item_cx(module, &decl.type_params, 0, |c| c.check_fn_body(f));
                }
            }
        }
        (self.fns[f as usize].dom, self.fns[f as usize].codom)
    }

    /// Resolves the parameter and return types of `f` in the current context.
    pub(super) fn resolve_fn_sig(&mut self, f: FnId) {
        self.fn_src[f as usize].state = SigState::Resolving;
        let decl = self.fn_src[f as usize].decl;
        let attrs = self.fn_src[f as usize].attrs;
        let params = match &decl.param.kind {
            ast::PatternKind::Tuple(ps) => ps.as_slice(),
            _ => std::slice::from_ref(&decl.param),
        };
        let mut ptys = Vec::new();
        let mut implicits = 0;
        for p in params {
            ptys.push(self.pattern_type(p));
            if matches!(p.kind, ast::PatternKind::Implicit(_)) {
                implicits += 1;
            } else if implicits > 0 {
                self.err(
                    p.span,
                    "a parameter follows an `implicit` one: implicit parameters come last",
                );
                implicits = 0;
            }
        }
        self.fns[f as usize].params = (params.len() as u32, implicits);
        let dom = if ptys.len() == 1 {
            ptys[0]
        } else {
            self.tys.tuple(ptys)
        };
        let codom = match &decl.ret {
            Some(t) => self.resolve_type(t),
            None if decl.body.is_none() => TyTable::UNIT,
            None => TyTable::ERROR,
        };
        self.fns[f as usize].dom = dom;
        self.fns[f as usize].codom = codom;
        self.fns[f as usize].linkage = self.linkage(decl, attrs);
        self.fn_src[f as usize].state = SigState::Done;
    }

    /// The type a parameter pattern declares; parameters must have written types.
    fn pattern_type(&mut self, p: &ast::Pattern) -> Ty {
        match &p.kind {
            ast::PatternKind::Typed { ty, .. } => self.resolve_type(ty),
            ast::PatternKind::Implicit(p) => self.pattern_type(p),
            ast::PatternKind::Tuple(ps) => {
                let ts = ps.iter().map(|p| self.pattern_type(p)).collect();
                self.tys.tuple(ts)
            }
            ast::PatternKind::Error => TyTable::ERROR,
            // `x as (a: T, b: U)`: the sub-pattern types the parameter.
            ast::PatternKind::Ident { sub: Some(sub), .. } => self.pattern_type(sub),
            // `S { x = a, ... }`: the struct named types the parameter.
            ast::PatternKind::Struct { path, .. } => self.resolve_type_path(path, p.span),
            // `[x: T, y, z]`: one annotated element types the array.
            ast::PatternKind::Array { elems, simd: false }
                if elems
                    .iter()
                    .any(|e| matches!(e.kind, ast::PatternKind::Typed { .. })) =>
            {
                let elem = elems
                    .iter()
                    .find_map(|e| match &e.kind {
                        ast::PatternKind::Typed { ty, .. } => Some(ty),
                        _ => None,
                    })
                    .map_or(TyTable::ERROR, |t| self.resolve_type(t));
                self.tys.array(elem, Some(elems.len() as u64), false)
            }
            _ => {
                self.err(
                    p.span,
                    "function parameters need a type annotation: `name: T`",
                );
                TyTable::ERROR
            }
        }
    }

    fn linkage(&mut self, decl: &ast::FnDecl, attrs: &[ast::Attr]) -> Linkage {
        let mut linkage = Linkage::Internal;
        for a in attrs {
            let mut name: Box<str> = decl.name.name.clone();
            let mut cc: Box<str> = "C".into();
            for arg in &a.args {
                match arg {
                    AttrArg::Value(k, Literal::Str(s)) if &*k.name == "name" => {
                        name = String::from_utf8_lossy(s).into()
                    }
                    AttrArg::Value(k, Literal::Str(s)) if &*k.name == "cc" => {
                        cc = String::from_utf8_lossy(s).into()
                    }
                    AttrArg::Value(k, _) | AttrArg::Flag(k) => self.err(
                        k.span,
                        format!("unexpected attribute argument `{}`", k.name),
                    ),
                    AttrArg::List(l) => self.err(
                        l.span,
                        format!("unexpected attribute argument `{}`", l.name.name),
                    ),
                }
            }
            match &*a.name.name {
                "export" => {
                    if decl.body.is_none() {
                        self.err(a.span, "an exported function needs a body");
                    }
                    if !decl.type_params.is_empty() {
                        self.err(a.span, "a polymorphic function cannot be exported");
                    }
                    // One symbol per name: a second one would be a linker error, or a
                    // function exported under a name it does not have.
                    match self.exported.get(&name) {
                        Some(&first) => {
                            let d = self
                                .error(decl.name.span, format!("a function named `{name}` is already exported"))
                                .with_label_message("exported again here")
                                .with_secondary(first, "first exported here")
                                .with_note("exported functions share one namespace, whatever their scope: rename one, or export it with `#[export(name = \"...\")]`");
                            self.emit(d);
                        }
                        None => {
                            self.exported.insert(name.clone(), decl.name.span);
                        }
                    }
                    linkage = Linkage::Export(name);
                }
                "import" => {
                    if !matches!(&*cc, "C" | "device" | "thorin" | "builtin") {
                        self.err(
                            a.span,
                            format!("unknown calling convention `{cc}` (expected \"C\", \"device\", \"thorin\" or \"builtin\")"),
                        );
                    }
                    if decl.body.is_some() {
                        self.err(a.span, "an imported function cannot have a body");
                    }
                    linkage = Linkage::Import { name, cc };
                }
                _ => {}
            }
        }
        if decl.body.is_none() && !matches!(linkage, Linkage::Import { .. }) {
            let d = self
                .error(
                    decl.name.span,
                    format!("function `{}` has no body", decl.name.name),
                )
                .with_note("a function without a body must be imported: `#[import(cc = \"C\")]`");
            self.emit(d);
        }
        if let (None, Some(flt)) = (&decl.body, &decl.filter) {
            let d = Diagnostic::warning(flt.span, "this filter has no effect")
                .with_label_message("a function without a body is never specialized")
                .with_note("remove the filter");
            self.emit(d);
        }
        linkage
    }

    /// Checks the body of `f` in the current context (its signature is resolved).
    pub(super) fn check_fn_body(&mut self, f: FnId) {
        let decl = self.fn_src[f as usize].decl;
        let Some(body) = &decl.body else {
            self.fn_src[f as usize].state = SigState::Done;
            return;
        };
        let infer = self.fns[f as usize].codom == TyTable::ERROR && decl.ret.is_none();
        if infer {
            self.fn_src[f as usize].state = SigState::Inferring;
        }
        let dom = self.fns[f as usize].dom;
        let codom = if infer {
            self.fresh_var()
        } else {
            self.fns[f as usize].codom
        };
        self.cx.scopes.push(FxHashMap::default());
        self.cx
            .fns
            .push((f, codom, infer.then_some((decl.name.span, "function"))));
        let param = self.fn_params(&decl.param, dom);
        let filter = decl.filter.as_ref().map(|flt| self.check_filter(flt));
        let body_span = body.span;
        let mut b = self.expr(body, Some(codom));
        if infer {
            // The body's type is the return type.
            if !self.unify(codom, b.ty) {
                b = self.coerce(b, codom);
            }
        } else {
            b = self.coerce(b, codom);
        }
        self.cx.fns.pop();
        self.cx.scopes.pop();
        let mut codom = self.zonk(codom);
        if self.tys.has_vars(codom) {
            self.err(
                body_span,
                "cannot infer the return type of this function; write it: `-> T`",
            );
            codom = TyTable::ERROR;
        }
        let mut lambda = hir::Lambda {
            param,
            dom,
            codom,
            body: b,
            filter,
            continue_of: None,
            returns_of: Some(f),
        };
        self.zonk_lambda(&mut lambda);
        self.fns[f as usize].codom = codom;
        self.fns[f as usize].body = Some(lambda);
        self.fn_src[f as usize].state = SigState::Done;
    }

    /// Binds function parameters (the tuple pattern of the declaration) to the domain.
    pub(super) fn fn_params(&mut self, param: &ast::Pattern, dom: Ty) -> hir::Pat {
        match &param.kind {
            ast::PatternKind::Tuple(ps) if ps.len() == 1 => {
                let p = self.pattern(&ps[0], dom, true);
                hir::Pat {
                    span: param.span,
                    ..p
                }
            }
            _ => self.pattern(param, dom, true),
        }
    }

    /// Checks a filter `@(e)` or `@`.
    pub(super) fn check_filter(&mut self, flt: &'a ast::Filter) -> Option<Box<hir::Expr>> {
        let e = flt.expr.as_ref()?;
        let saved = std::mem::replace(&mut self.cx.in_filter, true);
        let h = self.check_expr(e, TyTable::BOOL);
        self.cx.in_filter = saved;
        if let Some(span) = impure_part(&h, true) {
            let d = self
                .error(span, "a filter must be a simple expression")
                .with_note("it may use parameters, literals, `?x`, arithmetic, comparisons and `&&`/`||`; not calls, branches or memory");
            self.emit(d);
        }
        Some(Box::new(h))
    }

    /// Resolves a static's type and checks its initializer.
    pub(super) fn static_info(&mut self, s: StaticId, use_span: Span) -> Ty {
        let (item, module, state) = self.static_src[s as usize];
        match state {
            SigState::Done => return self.statics[s as usize].ty,
            SigState::Pending => {}
            _ => {
                let d = self.error(
                    use_span,
                    format!(
                        "the initializer of `{}` depends on itself",
                        self.statics[s as usize].name
                    ),
                );
                self.emit(d);
                return TyTable::ERROR;
            }
        }
        self.static_src[s as usize].2 = SigState::Resolving;
        let ItemKind::Static { ty, init, name, .. } = &item.kind else {
            return TyTable::ERROR;
        };
        let (t, init) = self.in_item_cx(module, &[], 0, |c| {
            let declared = ty.as_ref().map(|t| c.resolve_type(t));
            let init = init.as_ref().map(|e| match declared {
                Some(t) => c.check_expr(e, t),
                None => c.expr(e, None),
            });
            let t = match (declared, &init) {
                (Some(t), _) => t,
                (None, Some(i)) => i.ty,
                (None, None) => {
                    c.err(name.span, "a static needs a type or an initializer");
                    TyTable::ERROR
                }
            };
            let mut init = init;
            if let Some(i) = &mut init {
                c.zonk_expr(i);
            }
            (c.zonk(t), init)
        });
        if let Some(span) = init.as_ref().and_then(|i| impure_part(i, false)) {
            let d = self
                .error(span, "a static's initializer must be a constant expression")
                .with_note("it may use literals, strings, aggregates, arithmetic and casts; not calls, variables or memory");
            self.emit(d);
        }
        // Without an initializer the static is zeros, a value like any other: as large as
        // an array value may be, and no larger (the zeros are built at compile time).
        let elements = self.elements(t);
        if init.is_none() && elements > super::expr::MAX_ARRAY_VALUE {
            let d = self
                .error(
                    name.span,
                    format!("array too large: `{}` holds {elements} elements (a value may hold at most {})", name.name, super::expr::MAX_ARRAY_VALUE),
                )
                .with_note("allocate a buffer for large arrays: `alloc_cpu(n * size)`");
            self.emit(d);
            self.statics[s as usize].ty = TyTable::ERROR;
            self.static_src[s as usize].2 = SigState::Done;
            return TyTable::ERROR;
        }
        self.statics[s as usize].ty = t;
        self.statics[s as usize].init = init;
        self.static_src[s as usize].2 = SigState::Done;
        t
    }

    /// The numbers a value of type `t` holds, counting each element of a definite array
    /// (saturating): what a value without an initializer is made of.
    fn elements(&mut self, t: Ty) -> u64 {
        match self.tys.kind(t).clone() {
            TyKind::Array {
                elem, len: Some(n), ..
            } => n.saturating_mul(self.elements(elem).max(1)),
            TyKind::Tuple(ts) => ts
                .into_iter()
                .fold(0u64, |a, c| a.saturating_add(self.elements(c))),
            TyKind::Struct(d, args) => {
                let fields: Vec<Ty> = (self.structs[d as usize].fields.iter())
                    .map(|&(_, f)| f)
                    .collect();
                fields.into_iter().fold(0u64, |a, f| {
                    let f = self.tys.subst(f, &args);
                    a.saturating_add(self.elements(f))
                })
            }
            _ => 1,
        }
    }

    /// Checks every item.
    pub(super) fn check_all(&mut self) {
        for d in 0..self.structs.len() {
            self.struct_info(d as DeclId);
        }
        for d in 0..self.enums.len() {
            self.enum_info(d as DeclId);
        }
        self.check_sized();
        for a in 0..self.aliases.len() {
            self.alias_type(a as u32);
        }
        for u in 0..self.uses.len() {
            let span = self.uses[u].path.span;
            self.deref_use(ItemRef::Use(u as u32), span);
        }
        for s in 0..self.statics.len() {
            let span = self.statics[s].span;
            self.static_info(s as StaticId, span);
        }
        for f in 0..self.fns.len() {
            if self.fns[f].nested {
                continue;
            }
            let span = self.fns[f].span;
            self.fn_sig(f as FnId, span);
            if self.fn_src[f].state == SigState::Done && self.fns[f].body.is_none() {
                let module = self.fn_src[f].module;
                let decl = self.fn_src[f].decl;
                self.in_item_cx(module, &decl.type_params, 0, |c| c.check_fn_body(f as FnId));
            }
        }
    }
}

/// What a variant carries, resolved.
enum Payload {
    None,
    Tuple(Ty),
    Record((Vec<(Box<str>, Ty)>, Vec<Option<hir::Expr>>)),
}

/// A struct or an enum, as a node of the containment graph.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Decl {
    Struct(DeclId),
    Enum(DeclId),
}

impl Checker<'_> {
    /// Reports structs and enums that contain themselves by value (not through a pointer):
    /// their values would have no finite size.
    fn check_sized(&mut self) {
        let decls: Vec<Decl> = (0..self.structs.len() as DeclId)
            .map(Decl::Struct)
            .chain((0..self.enums.len() as DeclId).map(Decl::Enum))
            .collect();
        // Iterative depth-first search with colours: 1 = on the path, 2 = done.
        let mut colour: FxHashMap<Decl, u8> = FxHashMap::default();
        for &root in &decls {
            if colour.contains_key(&root) {
                continue;
            }
            let mut stack = vec![(root, self.contained(root), 0usize)];
            colour.insert(root, 1);
            while let Some((d, succ, i)) = stack.last_mut() {
                let Some(&next) = succ.get(*i) else {
                    colour.insert(*d, 2);
                    stack.pop();
                    continue;
                };
                *i += 1;
                match colour.get(&next) {
                    None => {
                        colour.insert(next, 1);
                        let s = self.contained(next);
                        stack.push((next, s, 0));
                    }
                    Some(1) => {
                        let cycle: Vec<Decl> = stack
                            .iter()
                            .map(|(d, _, _)| *d)
                            .skip_while(|d| *d != next)
                            .collect();
                        self.report_unsized(&cycle);
                    }
                    _ => {}
                }
            }
        }
    }

    /// The structs and enums a value of `d` holds by value.
    fn contained(&self, d: Decl) -> Vec<Decl> {
        let tys: Vec<Ty> = match d {
            Decl::Struct(s) => self.structs[s as usize]
                .fields
                .iter()
                .map(|f| f.1)
                .collect(),
            Decl::Enum(e) => self.enums[e as usize]
                .variants
                .iter()
                .filter_map(|v| v.1)
                .collect(),
        };
        let mut out = Vec::new();
        let mut todo = tys;
        while let Some(t) = todo.pop() {
            match self.tys.kind(t) {
                TyKind::Struct(s, _) => out.push(Decl::Struct(*s)),
                TyKind::Enum(e, _) => out.push(Decl::Enum(*e)),
                TyKind::Tuple(ts) => todo.extend(ts.iter().copied()),
                TyKind::Array { elem, .. } => todo.push(*elem),
                _ => {}
            }
        }
        out
    }

    fn report_unsized(&mut self, cycle: &[Decl]) {
        let name_span = |c: &Checker, d: Decl| match d {
            Decl::Struct(s) => (
                c.structs[s as usize].name.clone(),
                c.structs[s as usize].span,
            ),
            Decl::Enum(e) => (c.enums[e as usize].name.clone(), c.enums[e as usize].span),
        };
        let (name, span) = name_span(self, cycle[0]);
        let mut d = self
            .error(
                span,
                format!("`{name}` contains itself: its values would have no finite size"),
            )
            .with_label_message("recursive without a pointer")
            .with_note(format!(
                "hold the recursive part through a pointer, for example `&{name}`"
            ));
        for &other in &cycle[1..] {
            let (n, s) = name_span(self, other);
            d = d.with_secondary(s, format!("`{n}` is part of the cycle"));
        }
        self.emit(d);
    }
}

pub(super) fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The first part of `e` that is not a simple pure expression (a constant one, or with
/// `vars`, one over immutable variables).
pub(super) fn impure_part(e: &hir::Expr, vars: bool) -> Option<Span> {
    use hir::ExprKind as K;
    let all = |xs: &[hir::Expr]| xs.iter().find_map(|x| impure_part(x, vars));
    match &e.kind {
        K::Lit(_) | K::Str(_) | K::Error => None,
        K::Var(_) if vars => None,
        K::Variant(_, x) => x.as_ref().and_then(|x| impure_part(x, vars)),
        K::Tuple(xs) | K::Array(xs) | K::Struct(xs) => all(xs),
        K::Repeat(x, _) | K::Unary(_, x) | K::Cast(x) | K::Known(x) | K::Halt(x) => {
            impure_part(x, vars)
        }
        K::Field(x, _) if !matches!(x.kind, K::Deref(_)) => impure_part(x, vars),
        // Functions, closures and immutable statics are constants too.
        K::Fn(..) | K::Lambda(_) if !vars => None,
        K::Static(_) if !vars => None,
        K::Binary(op, a, b) if !matches!(op, ast::BinOp::Div | ast::BinOp::Rem) || !vars => {
            impure_part(a, vars).or_else(|| impure_part(b, vars))
        }
        K::And(a, b) | K::Or(a, b) => impure_part(a, vars).or_else(|| impure_part(b, vars)),
        _ => Some(e.span),
    }
}

/// The value of an integer constant expression: a literal, negated or converted.
fn const_int(e: &hir::Expr) -> Option<i128> {
    match &e.kind {
        hir::ExprKind::Lit(hir::Lit::Int(n)) => Some(*n as i64 as i128),
        hir::ExprKind::Cast(x) => const_int(x),
        hir::ExprKind::Unary(crate::ast::UnaryOp::Neg, x) => const_int(x).map(|v| -v),
        _ => None,
    }
}
