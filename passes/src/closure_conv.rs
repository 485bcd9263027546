//! Closure elimination: the program in first-order form, for native back ends.
//!
//! What the optimization pipeline leaves higher-order goes one of three ways:
//!
//! - a local function with free values that is only ever called (never passed, stored or
//!   returned) is *lambda lifted*: it becomes a top-level function that takes its free
//!   values as extra parameters, and every call passes them;
//! - a continuation with free values that is used as a value is *closure converted*: its
//!   code becomes a top-level function taking an environment pointer first, which loads
//!   the free values from an environment record at entry; where the closure is made, the
//!   record is allocated and filled, and the value becomes the pair `(code, environment)`;
//! - a top-level function used as a value becomes the same pair, with a wrapper that
//!   ignores the environment.
//!
//! Types change with values: a function type (a continuation type that takes a
//! continuation) becomes `(cn(ptr(u8), ..), ptr(u8))`, and a call of such a value calls its
//! code with its environment. Continuation types that take no continuation (return points,
//! blocks) stay as they are. The result is a new world; filters, which only partial
//! evaluation reads, are not kept.
//!
//! Environments live on the heap and are never freed: closures that survive the pipeline
//! are expected to be few (`--report closures` lists them).

use crate::analysis;
use crate::analysis::free::{in_scope, Outside};
use crate::analysis::live::Live;
use crate::context::{Pass, PassContext, Remap};
use crate::rewrite::{cont_param_types, is_function_type, is_point_type, DefSet, ScopeIndex};
use durin_diag::Diagnostic;
use durin_ir::def::DefMap;
use durin_ir::{AddrSpace, Def, Node, Type, TypeKind, World};
use rustc_hash::{FxHashMap, FxHashSet};

/// What closure elimination did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Local functions lifted to top level.
    pub lifted: usize,
    /// Closures converted to code and environment.
    pub converted: usize,
    /// Top-level functions used as values (given a wrapper).
    pub wrapped: usize,
}

/// Where a lifted `k` takes its free values: before its last parameter when that is a
/// continuation (its return point), else after all of them.
fn lift_split(w: &World, k: Def) -> usize {
    let ps = cont_param_types(w, k);
    match ps.last() {
        Some(&t) if matches!(w.kind(t), TypeKind::Cont(_)) => ps.len() - 1,
        _ => ps.len(),
    }
}

/// What becomes of a continuation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Copied as it is (a top-level function called directly, or a block).
    Plain,
    /// A top-level function also used as a value.
    Wrap,
    /// A continuation with free values used as a value.
    Convert,
    /// A local function with free values that is only called.
    Lift,
}

/// `w` in first-order form, in a new world, and where the continuations of `w` went (a
/// converted closure: to its code).
pub fn run(w: &World) -> Result<(World, Remap, Stats), Diagnostic> {
    let roots: Vec<Def> = w.externals().collect();
    run_from(w, &roots)
}

/// [`run`] for the program that `roots` reach, which become the new world's externals, in
/// their order (the device code of a program: its kernels).
pub fn run_from(w: &World, roots: &[Def]) -> Result<(World, Remap, Stats), Diagnostic> {
    let live = Live::from_roots(w, roots.iter().copied());
    let conts: DefSet = live.conts().iter().copied().collect();
    let mut index = ScopeIndex::default();
    let closed = index.rebuild_closed(w, &conts);
    let users = live.users(w);
    let mut kinds = FxHashMap::default();
    for &k in &conts {
        let value = users.of(k).iter().any(|&u| used_as_value(w, u, k));
        let free = !closed.get(&k).copied().unwrap_or(true);
        let kind = match (is_function_type(w, w.type_of(k)), value, free) {
            (true, true, false) => Kind::Wrap,
            (true, true, true) => Kind::Convert,
            (true, false, true) if w.body(k).is_some() => Kind::Lift,
            _ => Kind::Plain,
        };
        kinds.insert(k, kind);
    }
    let closures: Vec<Def> = (conts.iter().copied())
        .filter(|k| matches!(kinds[k], Kind::Convert | Kind::Lift))
        .collect();
    let mut scopes: FxHashMap<Def, DefSet> = FxHashMap::default();
    for &c in &closures {
        scopes.insert(c, index.scope(c));
    }
    let free = free_values(w, &closures, &scopes, &kinds, &closed, &mut index)?;
    // Each continuation belongs to the innermost closure whose scope holds it.
    let mut home: FxHashMap<Def, Def> = FxHashMap::default();
    let mut by_size = closures.clone();
    by_size.sort_by_key(|c| std::cmp::Reverse(scopes[c].len()));
    for &c in &by_size {
        for &m in &scopes[&c] {
            home.insert(m, c);
        }
    }
    let mut cv = Converter {
        old: w,
        new: World::with_types_of(w),
        kinds,
        free,
        home,
        types: FxHashMap::default(),
        memo: FxHashMap::default(),
        conts: FxHashMap::default(),
        params: FxHashMap::default(),
        captured: FxHashMap::default(),
        wrappers: FxHashMap::default(),
        globals: FxHashMap::default(),
        pending: Vec::new(),
        stats: Stats::default(),
    };
    for &e in roots {
        let k = cv.cont_of(e)?;
        cv.new.make_external(k);
    }
    while let Some((old, new)) = cv.pending.pop() {
        cv.body(old, new)?;
    }
    let mut moved = DefMap::new();
    for (&old, &new) in &cv.conts {
        moved.insert(old, new);
    }
    Ok((cv.new, Remap::new(moved), cv.stats))
}

/// Whether user `u` refers to continuation `k` other than as the callee of its jump.
fn used_as_value(w: &World, u: Def, k: Def) -> bool {
    if w.node(u) != Node::Cont {
        return true;
    }
    let n = w.num_params(u);
    (w.ops(u).iter().enumerate()).any(|(i, &o)| o == k && i != n)
}

/// The values each closure uses from outside its scope, in a fixed order: parameters of
/// enclosing continuations, values computed from them, continuations with free values. A
/// lifted function called from a closure's scope brings its own free values in.
fn free_values(
    w: &World,
    closures: &[Def],
    scopes: &FxHashMap<Def, DefSet>,
    kinds: &FxHashMap<Def, Kind>,
    closed: &FxHashMap<Def, bool>,
    index: &mut ScopeIndex,
) -> Result<FxHashMap<Def, DefSet>, Diagnostic> {
    let mut free: FxHashMap<Def, DefSet> = FxHashMap::default();
    let mut calls: FxHashMap<Def, DefSet> = FxHashMap::default();
    // A continuation outside a scope: nothing to give when closed, a call when lifted, a
    // value otherwise.
    let outside = |x: Def| match (closed.get(&x).copied().unwrap_or(true), kinds.get(&x)) {
        (true, _) => Outside::Ignored,
        (false, Some(Kind::Lift)) => Outside::Called,
        (false, _) => Outside::Value,
    };
    for &c in closures {
        let found =
            analysis::free::free_values(w, &scopes[&c], index.cache(), &outside, &|_| false);
        free.insert(c, found.values);
        calls.insert(c, found.called);
    }
    // Lifted functions called from a scope: their free values are needed at the call.
    loop {
        let mut changed = false;
        for &c in closures {
            for l in calls[&c].clone() {
                if l == c {
                    continue;
                }
                let members = &scopes[&c];
                for x in free[&l].clone() {
                    let outside = !in_scope(w, index.cache(), members, x);
                    if outside && free.get_mut(&c).expect("every closure").insert(x) {
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    for &c in closures {
        for &x in &free[&c] {
            // A block of the code around, or a return point given to it (itself or chosen
            // by a `select`): either is a jump out of the closure, which a native function
            // cannot make.
            if is_point_type(w, w.type_of(x)) {
                return Err(Diagnostic::error_at(
                    w.loc(c),
                    format!(
                        "cannot convert `{}`: it jumps to {} of the code around it (a `break`, `continue` or `return` out of a closure that was not specialized away)",
                        w.name(c).unwrap_or("closure"),
                        w.name(x).map_or("a continuation".to_string(), |n| format!("`{n}`"))
                    ),
                )
                .with_note_at(
                    w.loc(x),
                    "native code can leave a function only by returning; partial evaluation (`-O2`, or `pe` in the pipeline) removes such a closure by specializing the function it is passed to (inside a recursion, at most 16 times deep), or by inlining it where that function is marked `@`",
                ));
            }
            if mentions_mem(w, w.type_of(x)) {
                return Err(Diagnostic::error_at(
                    w.loc(c),
                    format!(
                        "cannot convert `{}`: it uses a memory token of the code around it",
                        w.name(c).unwrap_or("closure")
                    ),
                ));
            }
        }
    }
    Ok(free)
}

/// Whether type `t` is or holds (not behind a pointer to a struct seen before) a function
/// type.
fn holds_function(w: &World, t: Type, seen: &mut FxHashSet<Type>) -> bool {
    if !seen.insert(t) {
        return false;
    }
    match w.kind(t) {
        TypeKind::Cont(ps) => {
            is_function_type(w, t) || ps.iter().any(|&p| holds_function(w, p, seen))
        }
        TypeKind::Tuple(ts) => ts.iter().any(|&t| holds_function(w, t, seen)),
        TypeKind::Ptr { pointee, .. } => holds_function(w, *pointee, seen),
        TypeKind::Array { elem, .. } => holds_function(w, *elem, seen),
        TypeKind::Struct(_) => (w.types().struct_decl(t))
            .is_some_and(|d| d.fields.iter().any(|&(_, f)| holds_function(w, f, seen))),
        _ => false,
    }
}

/// Whether type `t` is or holds `mem`.
fn mentions_mem(w: &World, t: Type) -> bool {
    match w.kind(t) {
        TypeKind::Mem => true,
        TypeKind::Tuple(ts) => ts.iter().any(|&t| mentions_mem(w, t)),
        TypeKind::Array { elem, .. } => mentions_mem(w, *elem),
        _ => false,
    }
}

struct Converter<'a> {
    old: &'a World,
    new: World,
    kinds: FxHashMap<Def, Kind>,
    /// Free values of each closure (converted or lifted).
    free: FxHashMap<Def, DefSet>,
    /// The innermost closure whose scope holds a continuation.
    home: FxHashMap<Def, Def>,
    types: FxHashMap<Type, Type>,
    /// Old def in the code of a closure (or at top level) to new def.
    memo: FxHashMap<(Def, Option<Def>), Def>,
    /// Old continuation to its new version: the plain copy, the lifted function or the
    /// code of a converted closure.
    conts: FxHashMap<Def, Def>,
    /// Old parameter to its new value.
    params: FxHashMap<Def, Def>,
    /// A free value of a closure, inside the closure's code, to its new value.
    captured: FxHashMap<(Def, Def), Def>,
    wrappers: FxHashMap<Def, Def>,
    globals: FxHashMap<Def, Def>,
    /// Old and new continuations whose bodies are still to convert.
    pending: Vec<(Def, Def)>,
    stats: Stats,
}

impl Converter<'_> {
    fn env_type(&mut self) -> Type {
        let u8t = self.new.ty_int(8, false);
        self.new.ty_ptr(u8t, AddrSpace::Generic)
    }

    /// The type `t` becomes: function types become (code, environment) pairs.
    fn ty(&mut self, t: Type) -> Result<Type, Diagnostic> {
        if let Some(&r) = self.types.get(&t) {
            return Ok(r);
        }
        let kind = self.old.kind(t).clone();
        let r = match kind {
            TypeKind::Cont(ps) => {
                let higher = is_function_type(self.old, t);
                let mut conv = Vec::with_capacity(ps.len() + 1);
                if higher {
                    conv.push(self.env_type());
                }
                for &p in ps.iter() {
                    conv.push(self.ty(p)?);
                }
                let code = self.new.ty_cont(&conv);
                if higher {
                    let env = self.env_type();
                    self.new.ty_tuple(&[code, env])
                } else {
                    code
                }
            }
            TypeKind::Tuple(ts) => {
                let ts = ts
                    .iter()
                    .map(|&t| self.ty(t))
                    .collect::<Result<Vec<_>, _>>()?;
                self.new.ty_tuple(&ts)
            }
            TypeKind::Ptr { pointee, space } => {
                let p = self.ty(pointee)?;
                self.new.ty_ptr(p, space)
            }
            TypeKind::Array { elem, len } => {
                let e = self.ty(elem)?;
                self.new.ty_array(e, len)
            }
            TypeKind::Struct(_) if holds_function(self.old, t, &mut FxHashSet::default()) => {
                // A struct with function fields: the same struct (the new world has the old
                // one's types) with pairs in those fields.
                let decl = self
                    .old
                    .types()
                    .struct_decl(t)
                    .expect("a struct type is declared");
                let fields = decl.fields.clone();
                self.types.insert(t, t);
                let mut conv = Vec::new();
                for (f, ft) in fields {
                    conv.push((f, self.ty(ft)?));
                }
                self.new.set_struct_fields(t, conv);
                t
            }
            _ => t,
        };
        self.types.insert(t, r);
        Ok(r)
    }

    fn kind(&self, k: Def) -> Kind {
        self.kinds.get(&k).copied().unwrap_or(Kind::Plain)
    }

    /// The new continuation for old `k`: its plain copy, its lifted version or its code;
    /// made (with its body left pending) on first request.
    fn cont_of(&mut self, k: Def) -> Result<Def, Diagnostic> {
        if let Some(&n) = self.conts.get(&k) {
            return Ok(n);
        }
        let old = self.old;
        let ps = cont_param_types(old, k);
        let mut tys = Vec::new();
        let kind = self.kind(k);
        if kind == Kind::Convert {
            tys.push(self.env_type());
        }
        let free: Vec<Def> = match kind {
            Kind::Lift | Kind::Convert => self.free[&k].iter().copied().collect(),
            _ => Vec::new(),
        };
        // A lifted function takes its free values before its return point, which stays
        // last (where the back ends look for it).
        let split = lift_split(old, k);
        let lifted = if kind == Kind::Lift { free.len() } else { 0 };
        for &p in &ps[..split] {
            tys.push(self.ty(p)?);
        }
        for &x in &free[..lifted] {
            tys.push(self.ty(old.type_of(x))?);
        }
        for &p in &ps[split..] {
            tys.push(self.ty(p)?);
        }
        let n = self.new.cont(&tys, old.name(k).unwrap_or("k"));
        self.new.set_places(n, old.places(k));
        self.conts.insert(k, n);
        let shift = usize::from(kind == Kind::Convert);
        for i in 0..ps.len() {
            if let Some(o) = old.param_if_built(k, i) {
                let after = if i >= split { lifted } else { 0 };
                let p = self.new.param(n, i + shift + after);
                self.params.insert(o, p);
            }
        }
        match kind {
            Kind::Lift => {
                self.stats.lifted += 1;
                for (j, &x) in free.iter().enumerate() {
                    let p = self.new.param(n, split + j);
                    self.captured.insert((k, x), p);
                }
            }
            Kind::Convert => {
                self.stats.converted += 1;
                let Some(mi) = (0..ps.len()).find(|&i| matches!(old.kind(ps[i]), TypeKind::Mem))
                else {
                    return Err(Diagnostic::error_at(
                        old.loc(k),
                        format!(
                            "cannot convert closure `{}`: it takes no memory token to read its environment with",
                            old.name(k).unwrap_or("closure")
                        ),
                    ));
                };
                let env_ty = self.env_record_type(k)?;
                let ptr = self.new.ty_ptr(env_ty, AddrSpace::Generic);
                let envp = self.new.param(n, 0);
                let envp = self.new.bitcast(ptr, envp);
                let mem = self.new.param(n, mi + 1);
                let ld = self.new.load(mem, envp);
                let m = self.new.extract_at(ld, 0);
                let rec = self.new.extract_at(ld, 1);
                if let Some(o) = old.param_if_built(k, mi) {
                    self.params.insert(o, m);
                }
                for (j, &x) in free.iter().enumerate() {
                    let v = self.new.extract_at(rec, j as u32);
                    self.captured.insert((k, x), v);
                }
            }
            _ => {}
        }
        self.pending.push((k, n));
        Ok(n)
    }

    /// The tuple type of the environment record of closure `k`.
    fn env_record_type(&mut self, k: Def) -> Result<Type, Diagnostic> {
        let free: Vec<Def> = self.free[&k].iter().copied().collect();
        let tys = (free.iter())
            .map(|&x| self.ty(self.old.type_of(x)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(self.new.ty_tuple(&tys))
    }

    /// The wrapper of top-level function `k` used as a value: its code takes an
    /// environment it ignores.
    fn wrapper(&mut self, k: Def) -> Result<Def, Diagnostic> {
        if let Some(&n) = self.wrappers.get(&k) {
            return Ok(n);
        }
        let target = self.cont_of(k)?;
        let mut tys = vec![self.env_type()];
        for p in cont_param_types(self.old, k) {
            tys.push(self.ty(p)?);
        }
        let name = format!("{}_closure", self.old.name(k).unwrap_or("k"));
        let n = self.new.cont(&tys, &name);
        self.new.set_places(n, self.old.places(k));
        let args: Vec<Def> = self.new.params(n)[1..].to_vec();
        self.new.set_body(n, target, &args);
        self.wrappers.insert(k, n);
        self.stats.wrapped += 1;
        Ok(n)
    }

    /// Converts the body of old continuation `k` into new continuation `n`.
    fn body(&mut self, k: Def, n: Def) -> Result<(), Diagnostic> {
        let old = self.old;
        let Some((callee, args)) = old.body(k).map(|(c, a)| (c, a.to_vec())) else {
            return Ok(());
        };
        let ctx = self.home.get(&k).copied();
        // Closures made here need an environment allocated on this jump's memory chain.
        let made = self.made_here(k, ctx);
        let mut local: Option<FxHashMap<Def, Def>> = None;
        if !made.is_empty() {
            local = Some(self.make_closures(k, ctx, &made)?);
        }
        // A lifted callee takes its free values where `lift_split` says.
        let (callee, extra, split) = match old.node(callee) {
            Node::Cont if self.kind(callee) == Kind::Lift => {
                let free: Vec<Def> = self.free[&callee].iter().copied().collect();
                let mut extra = Vec::new();
                for x in free {
                    extra.push(self.value(x, ctx, &mut local)?);
                }
                (self.cont_of(callee)?, extra, lift_split(old, callee))
            }
            _ => (self.value(callee, ctx, &mut local)?, Vec::new(), args.len()),
        };
        let mut new_args = Vec::with_capacity(args.len() + extra.len() + 1);
        for &a in &args[..split] {
            new_args.push(self.value(a, ctx, &mut local)?);
        }
        new_args.extend(extra);
        for &a in &args[split..] {
            new_args.push(self.value(a, ctx, &mut local)?);
        }
        let (callee, new_args) = match self.new.kind(self.new.type_of(callee)) {
            TypeKind::Tuple(_) => {
                let code = self.new.extract_at(callee, 0);
                let env = self.new.extract_at(callee, 1);
                let mut all = vec![env];
                all.extend(new_args);
                (code, all)
            }
            _ => (callee, new_args),
        };
        self.new.try_set_body(n, callee, &new_args).map_err(|e| {
            Diagnostic::error_at(
                old.loc(k),
                format!("internal compiler error: closure conversion made an ill-typed jump: {e}"),
            )
        })
    }

    /// The converted closures that the body of `k` makes (uses as values from outside
    /// their own code, or passes to a lifted callee as its free values), in a fixed order.
    fn made_here(&self, k: Def, ctx: Option<Def>) -> Vec<Def> {
        let old = self.old;
        let (callee, args) = old.body(k).expect("a body");
        let mut stack = vec![callee];
        stack.extend_from_slice(args);
        let mut seen = FxHashSet::default();
        let mut made = DefSet::default();
        while let Some(x) = stack.pop() {
            if !seen.insert(x) || ctx.is_some_and(|c| self.free[&c].contains(&x)) {
                continue;
            }
            match old.node(x) {
                Node::Cont => match self.kind(x) {
                    // Its environment holds its free values, made here too.
                    Kind::Convert if Some(x) != ctx && made.insert(x) => {
                        stack.extend(self.free[&x].iter().copied());
                    }
                    // A lifted function (only ever called: the callee) takes its free
                    // values as arguments, converted closures among them.
                    Kind::Lift => stack.extend(self.free[&x].iter().copied()),
                    _ => {}
                },
                Node::Param(_) | Node::Global { .. } => {}
                _ => stack.extend_from_slice(old.ops(x)),
            }
        }
        let mut made: Vec<Def> = made.into_iter().collect();
        made.sort();
        made
    }

    /// Allocates and fills the environments of the closures `made` in the body of `k`:
    /// before the first effect that uses one of them, or else after the memory token the
    /// jump passes. Returns the substitution for the rest of the body.
    fn make_closures(
        &mut self,
        k: Def,
        ctx: Option<Def>,
        made: &[Def],
    ) -> Result<FxHashMap<Def, Def>, Diagnostic> {
        let old = self.old;
        let name = |c: Def| old.name(c).unwrap_or("closure").to_string();
        let (_, args) = old.body(k).expect("a body");
        let Some(last) = args
            .iter()
            .copied()
            .find(|&a| matches!(old.kind(old.type_of(a)), TypeKind::Mem))
        else {
            return Err(Diagnostic::error_at(
                old.loc(made[0]).or(old.loc(k)),
                format!(
                    "cannot convert closure `{}`: it is made in a jump that passes no memory token to allocate its environment with",
                    name(made[0])
                ),
            ));
        };
        // The memory chain, from the jump's token back to where it enters this body.
        let mut chain = vec![last];
        let mut at = last;
        loop {
            let prev = match old.node(at) {
                Node::Store => old.ops(at)[0],
                Node::Extract if old.node(old.ops(at)[0]).is_effect() => old.ops(old.ops(at)[0])[0],
                _ => break,
            };
            chain.push(prev);
            at = prev;
        }
        chain.reverse();
        // The first effect that uses a closure made here, if any.
        let made_set: FxHashSet<Def> = made.iter().copied().collect();
        let mut insert_at = chain.len() - 1;
        for (i, &m) in chain.iter().enumerate().skip(1) {
            let effect = match old.node(m) {
                Node::Extract => old.ops(m)[0],
                _ => m,
            };
            if old.ops(effect)[1..]
                .iter()
                .any(|&o| reaches_any(old, o, &made_set))
            {
                insert_at = i - 1;
                break;
            }
        }
        let later: FxHashSet<Def> = chain[insert_at + 1..].iter().copied().collect();
        let mut local: Option<FxHashMap<Def, Def>> = Some(FxHashMap::default());
        let mut mem = self.value(chain[insert_at], ctx, &mut local)?;
        // All records first, then their contents: closures made together may capture each
        // other.
        let env_ty = self.env_type();
        let mut records = Vec::new();
        for &c in made {
            let rec_ty = self.env_record_type(c)?;
            let one = self.new.lit_i64(1);
            let a = self.new.alloc(mem, rec_ty, one);
            let (m, p) = (self.new.extract_at(a, 0), self.new.extract_at(a, 1));
            mem = m;
            let zero = self.new.lit_i64(0);
            let p = self.new.lea(p, zero);
            let env = self.new.bitcast(env_ty, p);
            let code = self.cont_of(c)?;
            let v = self.new.tuple(&[code, env]);
            local.as_mut().expect("set above").insert(c, v);
            records.push((c, p));
        }
        for (c, p) in records {
            let free: Vec<Def> = self.free[&c].iter().copied().collect();
            let mut vals = Vec::new();
            for &x in &free {
                if reaches_any(old, x, &later) {
                    return Err(Diagnostic::error_at(
                        old.loc(c),
                        format!(
                            "cannot convert closure `{}`: it captures a value computed after it is made",
                            name(c)
                        ),
                    ));
                }
                vals.push(self.value(x, ctx, &mut local)?);
            }
            let rec = self.new.tuple(&vals);
            mem = self.new.store(mem, p, rec);
        }
        let mut subst = local.take().expect("set above");
        // What was translated so far does not depend on the token replaced.
        subst.retain(|&d, _| !later.contains(&d) && d != chain[insert_at]);
        subst.insert(chain[insert_at], mem);
        Ok(subst)
    }

    /// The new value of old def `d` in the code of closure `ctx` (or at top level); `local`,
    /// when given, is the substitution of a body that makes closures (kept apart from what
    /// other bodies share).
    fn value(
        &mut self,
        d: Def,
        ctx: Option<Def>,
        local: &mut Option<FxHashMap<Def, Def>>,
    ) -> Result<Def, Diagnostic> {
        let old = self.old;
        let mut stack = vec![(d, false)];
        while let Some(&(x, expanded)) = stack.last() {
            if self.lookup(x, ctx, local).is_some() {
                stack.pop();
                continue;
            }
            let leaf = match old.node(x) {
                Node::Param(_) => Some(match self.params.get(&x) {
                    Some(&p) => p,
                    None => {
                        self.cont_of(old.ops(x)[0])?;
                        self.params[&x]
                    }
                }),
                Node::Cont => Some(match self.kind(x) {
                    Kind::Plain => self.cont_of(x)?,
                    Kind::Wrap => {
                        let code = self.wrapper(x)?;
                        let env_ty = self.env_type();
                        let env = self.new.bottom(env_ty);
                        self.new.tuple(&[code, env])
                    }
                    Kind::Convert if Some(x) == ctx => {
                        let code = self.cont_of(x)?;
                        let env = self.new.param(code, 0);
                        self.new.tuple(&[code, env])
                    }
                    Kind::Convert | Kind::Lift => {
                        return Err(Diagnostic::error_at(
                            old.loc(x),
                            format!(
                                "internal compiler error: closure `{}` used where it is not made",
                                old.name(x).unwrap_or("closure")
                            ),
                        ))
                    }
                }),
                Node::Global { mutable } => Some(match self.globals.get(&x) {
                    Some(&g) => g,
                    None => {
                        let init = self.value(old.ops(x)[0], None, &mut None)?;
                        let g = self
                            .new
                            .global(init, mutable, old.name(x).unwrap_or("global"));
                        self.globals.insert(x, g);
                        g
                    }
                }),
                _ => None,
            };
            if let Some(v) = leaf {
                stack.pop();
                self.remember(x, ctx, local, v);
                continue;
            }
            if !expanded {
                stack.last_mut().expect("just read").1 = true;
                for &o in old.ops(x) {
                    if self.lookup(o, ctx, local).is_none() {
                        stack.push((o, false));
                    }
                }
                continue;
            }
            stack.pop();
            let ops: Vec<Def> = (old.ops(x).iter())
                .map(|&o| self.lookup(o, ctx, local).expect("operands first"))
                .collect();
            let ty = self.ty(old.type_of(x))?;
            let v = self.new.build(old.node(x), ty, &ops);
            // The place of an index or a division, which run-time errors name.
            if matches!(old.node(x), Node::Lea | Node::Arith(_)) {
                if let Some(l) = old.loc(x) {
                    self.new.set_loc(v, l);
                }
            }
            self.remember(x, ctx, local, v);
        }
        Ok(self.lookup(d, ctx, local).expect("just converted"))
    }

    fn lookup(&self, x: Def, ctx: Option<Def>, local: &Option<FxHashMap<Def, Def>>) -> Option<Def> {
        if let Some(c) = ctx {
            if let Some(&v) = self.captured.get(&(c, x)) {
                return Some(v);
            }
        }
        match local {
            Some(l) => l.get(&x).copied(),
            None => self.memo.get(&(x, ctx)).copied(),
        }
    }

    fn remember(
        &mut self,
        x: Def,
        ctx: Option<Def>,
        local: &mut Option<FxHashMap<Def, Def>>,
        v: Def,
    ) {
        match local {
            Some(l) => {
                l.insert(x, v);
            }
            None => {
                self.memo.insert((x, ctx), v);
            }
        }
    }
}

/// Whether `d` reaches one of `targets` through structural defs.
fn reaches_any(w: &World, d: Def, targets: &FxHashSet<Def>) -> bool {
    let mut stack = vec![d];
    let mut seen = FxHashSet::default();
    while let Some(x) = stack.pop() {
        if targets.contains(&x) {
            return true;
        }
        if !seen.insert(x) || w.node(x).is_nominal() || matches!(w.node(x), Node::Param(_)) {
            continue;
        }
        stack.extend_from_slice(w.ops(x));
    }
    false
}

/// The pass `closure-conv`.
pub(crate) struct ClosureConv;

impl Pass for ClosureConv {
    fn name(&self) -> &'static str {
        "closure-conv"
    }

    fn description(&self) -> &'static str {
        "first-order form for native code: lift local functions that are only called to top level, and turn functions used as values into (code, environment) pairs"
    }

    fn lowers(&self) -> bool {
        true
    }

    fn run(&self, w: &mut World, cx: &mut PassContext<'_>) -> Result<(), Diagnostic> {
        let (new, remap, _) = run(w)?;
        *w = new;
        cx.rebuilt(remap);
        Ok(())
    }
}
