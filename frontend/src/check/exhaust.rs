//! Exhaustiveness of `match`: the usefulness algorithm of Maranget ("Warnings for pattern
//! matching", JFP 2007) over a matrix of patterns, one row per arm, which also produces a
//! value that no arm matches, for the diagnostic.
//!
//! Constructors are those of `bool`, of enums (one per variant), and the single constructor
//! of tuples, structs and arrays. Integer and float literals have no complete set of
//! constructors: a `match` on numbers needs a pattern that matches the rest.

use super::*;
use crate::hir::{Lit, Pat, PatKind};

/// A head constructor.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Ctor {
    Bool(bool),
    Variant(u32),
    /// The one constructor of a tuple, struct or array type.
    Single,
    /// A literal of a type with infinitely many values (never part of a complete set).
    Lit,
}

/// A wildcard, which the rows use for sub-patterns a pattern leaves out.
static WILD: Pat = Pat {
    kind: PatKind::Wild,
    ty: TyTable::ERROR,
    span: Span::NONE,
};

type Row<'p> = Vec<&'p Pat>;

impl Checker<'_> {
    /// A value of type `t` that none of `pats` matches, written as a pattern; `None` when
    /// they cover every value.
    pub(super) fn uncovered(&mut self, pats: &[&Pat], t: Ty) -> Option<String> {
        let rows: Vec<Row> = pats.iter().map(|p| vec![*p]).collect();
        self.missing(rows, vec![t]).map(|mut w| w.remove(0))
    }

    /// Reports a pattern of `if let`/`while let` that matches every value: the test is
    /// pointless, as in Artic an error.
    pub(super) fn require_refutable(&mut self, p: &Pat, t: Ty, what: &str) {
        if matches!(p.kind, PatKind::Error) || self.resolve(t) == TyTable::ERROR {
            return;
        }
        if self.uncovered(&[p], t).is_none() {
            let d = self
                .error(p.span, format!("this `{what}` pattern matches every value"))
                .with_label_message("always matches")
                .with_note(if what == "if let" {
                    "bind it with `let` instead"
                } else {
                    "write the loop with `while true` and bind the value with `let`"
                });
            self.emit(d);
        }
    }

    /// A witness row (one pattern text per column of `tys`) that no row of `rows` matches.
    fn missing(&mut self, rows: Vec<Row<'_>>, tys: Vec<Ty>) -> Option<Vec<String>> {
        let Some((&t0, rest_tys)) = tys.split_first() else {
            return rows.is_empty().then(Vec::new);
        };
        let t0 = self.resolve(t0);
        // The rows by their head constructor; rows that start with a wildcard belong to every
        // constructor. (Grouping once keeps a match over thousands of variants linear.)
        let mut by_head: FxHashMap<Ctor, Vec<usize>> = FxHashMap::default();
        let mut wild = Vec::new();
        for (i, r) in rows.iter().enumerate() {
            match head_ctor(r[0]) {
                Some(c) => by_head.entry(c).or_default().push(i),
                None => wild.push(i),
            }
        }
        match self.all_ctors(t0) {
            Some(all) if all.iter().all(|c| by_head.contains_key(c)) => {
                for c in all {
                    let arg_tys = self.ctor_arg_types(t0, c);
                    let arity = arg_tys.len();
                    let mut which: Vec<usize> = by_head[&c].iter().chain(&wild).copied().collect();
                    which.sort_unstable();
                    let sub_rows = which
                        .iter()
                        .filter_map(|&i| specialize(&rows[i], c, arity))
                        .collect();
                    let sub_tys = arg_tys
                        .into_iter()
                        .chain(rest_tys.iter().copied())
                        .collect();
                    if let Some(w) = self.missing(sub_rows, sub_tys) {
                        let (args, rest) = w.split_at(arity);
                        let mut out = vec![self.show_ctor(t0, c, args)];
                        out.extend_from_slice(rest);
                        return Some(out);
                    }
                }
                None
            }
            all => {
                let default = rows
                    .iter()
                    .filter(|r| head_ctor(r[0]).is_none())
                    .map(|r| r[1..].to_vec())
                    .collect();
                let mut w = self.missing(default, rest_tys.to_vec())?;
                // Name a constructor no row starts with, when there is one to name.
                let head = match all {
                    Some(all) if !by_head.is_empty() => {
                        match all.into_iter().find(|c| !by_head.contains_key(c)) {
                            Some(c) => {
                                let args = vec!["_".to_string(); self.ctor_arg_types(t0, c).len()];
                                self.show_ctor(t0, c, &args)
                            }
                            None => "_".into(),
                        }
                    }
                    _ => "_".into(),
                };
                w.insert(0, head);
                Some(w)
            }
        }
    }

    /// Every constructor of `t`, when `t` has a finite set of them.
    fn all_ctors(&self, t: Ty) -> Option<Vec<Ctor>> {
        match self.tys.kind(t) {
            TyKind::Prim(Prim::Bool) => Some(vec![Ctor::Bool(false), Ctor::Bool(true)]),
            TyKind::Enum(e, _) => {
                let n = self.enums[*e as usize].variants.len() as u32;
                Some((0..n).map(Ctor::Variant).collect())
            }
            TyKind::Tuple(_) | TyKind::Struct(..) | TyKind::Array { len: Some(_), .. } => {
                Some(vec![Ctor::Single])
            }
            _ => None,
        }
    }

    /// The types of the sub-values constructor `c` of type `t` holds.
    fn ctor_arg_types(&mut self, t: Ty, c: Ctor) -> Vec<Ty> {
        match (self.tys.kind(t).clone(), c) {
            (TyKind::Enum(e, args), Ctor::Variant(v)) => {
                match self.enums[e as usize].variants[v as usize].1 {
                    Some(p) => vec![self.tys.subst(p, &args)],
                    None => Vec::new(),
                }
            }
            (TyKind::Tuple(ts), Ctor::Single) => ts,
            (TyKind::Struct(d, args), Ctor::Single) => {
                let fields = self.structs[d as usize].fields.clone();
                fields
                    .iter()
                    .map(|(_, ft)| self.tys.subst(*ft, &args))
                    .collect()
            }
            (
                TyKind::Array {
                    elem, len: Some(n), ..
                },
                Ctor::Single,
            ) => vec![elem; n as usize],
            _ => Vec::new(),
        }
    }

    /// Constructor `c` of type `t` applied to the pattern texts `args`.
    fn show_ctor(&mut self, t: Ty, c: Ctor, args: &[String]) -> String {
        match (self.tys.kind(t).clone(), c) {
            (_, Ctor::Bool(b)) => b.to_string(),
            (TyKind::Enum(e, _), Ctor::Variant(v)) => {
                let info = &self.enums[e as usize];
                let name = format!("{}::{}", info.name, info.variants[v as usize].0);
                match args {
                    [] => name,
                    [a] if a.starts_with('(') => format!("{name}{a}"),
                    _ => format!("{name}({})", args.join(", ")),
                }
            }
            (TyKind::Struct(d, _), Ctor::Single) => {
                let info = &self.structs[d as usize];
                if info.shape == ast::StructShape::Record {
                    let fields: Vec<String> = info
                        .fields
                        .iter()
                        .zip(args)
                        .map(|((n, _), a)| format!("{n} = {a}"))
                        .collect();
                    format!("{} {{ {} }}", info.name, fields.join(", "))
                } else if args.is_empty() {
                    info.name.to_string()
                } else {
                    format!("{}({})", info.name, args.join(", "))
                }
            }
            (TyKind::Array { simd, .. }, Ctor::Single) => {
                format!("{}[{}]", if simd { "simd" } else { "" }, args.join(", "))
            }
            (_, Ctor::Single) if args.len() == 1 => format!("({},)", args[0]),
            (_, Ctor::Single) => format!("({})", args.join(", ")),
            _ => "_".into(),
        }
    }
}

/// The pattern with bindings looked through (`x as p` is `p`, `x` is `_`).
fn strip(mut p: &Pat) -> &Pat {
    while let PatKind::Bind(_, sub) = &p.kind {
        match sub {
            Some(s) => p = s,
            None => return &WILD,
        }
    }
    p
}

/// The constructor a pattern starts with; `None` for wildcards.
fn head_ctor(p: &Pat) -> Option<Ctor> {
    match &strip(p).kind {
        PatKind::Wild | PatKind::Bind(..) | PatKind::Error => None,
        PatKind::Lit(Lit::Bool(b)) => Some(Ctor::Bool(*b)),
        PatKind::Lit(_) => Some(Ctor::Lit),
        PatKind::Variant(v, _) => Some(Ctor::Variant(*v)),
        PatKind::Tuple(_) | PatKind::Struct(_) | PatKind::Array(_) => Some(Ctor::Single),
    }
}

/// The row with its first pattern replaced by the `arity` sub-patterns of constructor `c`;
/// `None` when the first pattern is another constructor.
fn specialize<'p>(row: &[&'p Pat], c: Ctor, arity: usize) -> Option<Row<'p>> {
    let p = strip(row[0]);
    let mut out: Row<'p> = match (&p.kind, head_ctor(p)) {
        (_, None) => vec![&WILD; arity],
        (_, Some(h)) if h != c => return None,
        (PatKind::Variant(_, sub), _) => sub.iter().map(|s| &**s).collect(),
        (PatKind::Tuple(ps) | PatKind::Array(ps), _) => ps.iter().collect(),
        (PatKind::Struct(fs), _) => {
            let mut args = vec![&WILD; arity];
            for (i, q) in fs {
                if let Some(slot) = args.get_mut(*i as usize) {
                    *slot = q;
                }
            }
            args
        }
        _ => Vec::new(),
    };
    // A malformed pattern (an error was reported) must not break the matrix's shape.
    out.resize(arity, &WILD);
    out.extend_from_slice(&row[1..]);
    Some(out)
}
