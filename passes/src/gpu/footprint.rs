//! Footprints of a kernel's read-only buffers: each load's element index as an affine
//! function of the thread and block indices, with coefficients that are constants or
//! values the same for every thread (kernel parameters such as a row pitch), and from those
//! the box of offsets around each thread's pixel that a block reads.
//!
//! An index is a set of *candidates*, one per way a `select` may go (the boundary
//! handlers' `min`, `max` and mirrors are selects): the value is one of them. A candidate
//! is a polynomial over *atoms*: `threadIdx` and `blockIdx` components (thread-dependent)
//! and uniform values (a parameter, or any def that depends on no thread index); a
//! monomial with two thread-dependent atoms makes it non-affine. `blockDim` is the launch's
//! constant block shape where the launch has one.
//!
//! The buffer's *pixel* is the thread part common to the candidates whose x coefficient
//! (`threadIdx.x`) is +1: `bid.x * bx + tid.x` across and the same times a row stride
//! down. A candidate with that thread part is the pixel plus a constant offset across and a
//! constant number of rows down; one without it (an edge pixel, a reflection) is what the
//! boundary handler reads outside the image, which staging would load through the handler.

use super::affine::{add, atom, constant, mul, sign_extend, Atom, Poly};
use durin_ir::{ArithOp, Def, Node, TypeKind, World};
use rustc_hash::FxHashMap;

/// Most candidates an index may have.
const MAX_CANDIDATES: usize = 64;

/// The index analysis of one kernel.
pub(crate) struct Indices<'w> {
    w: &'w World,
    kernel: Def,
    block: Option<[u32; 3]>,
    /// The CUDA index each return-point parameter holds (`threadIdx.x` ...).
    specials: FxHashMap<Def, IndexVar>,
    /// The values passed to each block parameter.
    incoming: FxHashMap<Def, Vec<Def>>,
    memo: FxHashMap<Def, Result<Vec<Poly>, String>>,
    thread_memo: FxHashMap<Def, bool>,
    /// The integer value parameters as the launch computes them (`pitch + 1`, hoisted out
    /// of the kernel), polynomials over host values, so that such parameters compare.
    derived: FxHashMap<Def, Poly>,
}

/// The host's side of a launch: its world and the values it passes to the kernel's value
/// parameters, in order.
pub(crate) type HostSide<'h> = Option<(&'h World, &'h [Def])>;

/// `h`, an integer the host computes, as a polynomial over the host's values that are not
/// arithmetic (parameters, loads, calls' results), when it is one.
fn expand(host: &World, h: Def, depth: u32) -> Option<Poly> {
    if depth > 32 || !matches!(host.kind(host.type_of(h)), TypeKind::Int { .. }) {
        return None;
    }
    let ops = host.ops(h);
    let sub = |x: Def| expand(host, x, depth + 1);
    Some(match host.node(h) {
        Node::Lit(v) => constant(sign_extend(host, h, v)),
        Node::Arith(ArithOp::Add) => add(&sub(ops[0])?, &sub(ops[1])?, 1),
        Node::Arith(ArithOp::Sub) => add(&sub(ops[0])?, &sub(ops[1])?, -1),
        Node::Arith(ArithOp::Mul) => mul(&sub(ops[0])?, &sub(ops[1])?).ok()?,
        Node::Conv if matches!(host.kind(host.type_of(ops[0])), TypeKind::Int { .. }) => {
            sub(ops[0])?
        }
        _ => atom(Atom::Host(h)),
    })
}

/// A CUDA index a parameter holds: `threadIdx`, `blockIdx` or `blockDim` component.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IndexVar {
    /// `threadIdx` x, y, z.
    Tid(u8),
    /// `blockIdx` x, y, z.
    Bid(u8),
    /// `blockDim` x, y, z.
    Dim(u8),
}

impl<'w> Indices<'w> {
    /// The parameters that hold CUDA indices, with which.
    pub(crate) fn index_params(&self) -> Vec<(Def, IndexVar)> {
        let mut out: Vec<(Def, IndexVar)> = self.specials.iter().map(|(&p, &v)| (p, v)).collect();
        out.sort_by_key(|&(p, _)| p);
        out
    }

    /// The analysis of `kernel`, whose continuations are `conts` and whose block
    /// parameters receive the values `incoming`.
    pub(crate) fn new(
        w: &'w World,
        kernel: Def,
        block: Option<[u32; 3]>,
        conts: &[Def],
        incoming: FxHashMap<Def, Vec<Def>>,
        host: HostSide,
    ) -> Indices<'w> {
        let mut derived = FxHashMap::default();
        if let Some((hw, captured)) = host {
            for (i, &h) in captured.iter().enumerate() {
                if let (Some(p), Some(poly)) = (w.param_if_built(kernel, i + 1), expand(hw, h, 0)) {
                    derived.insert(p, poly);
                }
            }
        }
        let mut specials = FxHashMap::default();
        for &k in conts {
            let Some((callee, args)) = w.body(k) else {
                continue;
            };
            let is_import = w.node(callee) == Node::Cont && w.body(callee).is_none();
            let (Some(name), true, Some(&ret)) = (w.name(callee), is_import, args.last()) else {
                continue;
            };
            let Some((var, comp)) = name.split_once('.') else {
                continue;
            };
            let c = match comp {
                "x" => 0,
                "y" => 1,
                "z" => 2,
                _ => continue,
            };
            let Some(p) = w.param_if_built(ret, 1) else {
                continue;
            };
            let v = match var {
                "threadIdx" => IndexVar::Tid(c),
                "blockIdx" => IndexVar::Bid(c),
                "blockDim" => IndexVar::Dim(c),
                _ => continue,
            };
            specials.insert(p, v);
        }
        Indices {
            w,
            kernel,
            block,
            specials,
            incoming,
            memo: FxHashMap::default(),
            thread_memo: FxHashMap::default(),
            derived,
        }
    }

    /// Whether `d` may differ between threads.
    fn depends_on_thread(&mut self, d: Def) -> bool {
        if let Some(&b) = self.thread_memo.get(&d) {
            return b;
        }
        // Assumed not while it is being decided (a loop through block parameters).
        self.thread_memo.insert(d, false);
        let w = self.w;
        let b = match w.node(d) {
            // `blockDim` is the same for every thread.
            Node::Param(_) if self.specials.contains_key(&d) => {
                !matches!(self.specials[&d], IndexVar::Dim(_))
            }
            Node::Param(_) if w.ops(d)[0] == self.kernel => false,
            Node::Param(_) => match self.incoming.get(&d).cloned() {
                Some(args) => args.into_iter().any(|a| self.depends_on_thread(a)),
                // A result of a call: taken as thread-dependent.
                None => true,
            },
            Node::Cont | Node::Lit(_) | Node::Global { .. } => false,
            // Memory may hold anything.
            Node::Load => true,
            _ => w
                .ops(d)
                .to_vec()
                .into_iter()
                .any(|o| self.depends_on_thread(o)),
        };
        self.thread_memo.insert(d, b);
        b
    }

    /// The candidates of the integer `d`.
    fn candidates(&mut self, d: Def) -> Result<Vec<Poly>, String> {
        if let Some(r) = self.memo.get(&d) {
            return r.clone();
        }
        // A loop through block parameters: not affine.
        self.memo
            .insert(d, Err("a value that changes around a loop".into()));
        let r = self.compute(d);
        let r = match r {
            Ok(c) if c.len() > MAX_CANDIDATES => Err("too many ways through selects".into()),
            r => r,
        };
        self.memo.insert(d, r.clone());
        r
    }

    fn compute(&mut self, d: Def) -> Result<Vec<Poly>, String> {
        let w = self.w;
        match (self.specials.get(&d), self.block) {
            (Some(&IndexVar::Tid(c)), _) => return Ok(vec![atom(Atom::Tid(c))]),
            (Some(&IndexVar::Bid(c)), _) => return Ok(vec![atom(Atom::Bid(c))]),
            (Some(&IndexVar::Dim(c)), Some(b)) => return Ok(vec![constant(b[c as usize] as i64)]),
            _ => {}
        }
        let uniform = !self.depends_on_thread(d);
        let arith = matches!(
            w.node(d),
            Node::Arith(ArithOp::Add | ArithOp::Sub | ArithOp::Mul | ArithOp::Shl)
        ) || (w.node(d) == Node::Conv && is_int(w, d) && is_int(w, w.ops(d)[0]));
        match w.node(d) {
            Node::Lit(v) => return Ok(vec![constant(sign_extend(w, d, v))]),
            _ if self.derived.contains_key(&d) => return Ok(vec![self.derived[&d].clone()]),
            // Uniform arithmetic is taken apart, so that `dy * pitch` is dy times `pitch`;
            // any other uniform value is an atom of its own.
            _ if uniform && !arith => return Ok(vec![atom(Atom::Uniform(d))]),
            _ => {}
        }
        let ops = w.ops(d).to_vec();
        let both = |s: &mut Self, f: &dyn Fn(&Poly, &Poly) -> Result<Poly, String>| {
            let (a, b) = (s.candidates(ops[0])?, s.candidates(ops[1])?);
            let mut out = Vec::new();
            for x in &a {
                for y in &b {
                    out.push(f(x, y)?);
                    if out.len() > MAX_CANDIDATES {
                        return Err("too many ways through selects".to_string());
                    }
                }
            }
            Ok(out)
        };
        match w.node(d) {
            Node::Arith(ArithOp::Add) => both(self, &|a, b| Ok(add(a, b, 1))),
            Node::Arith(ArithOp::Sub) => both(self, &|a, b| Ok(add(a, b, -1))),
            Node::Arith(ArithOp::Mul) => both(self, &mul),
            Node::Arith(ArithOp::Shl) => match w.lit_bits(ops[1]) {
                Some(k) if k < 32 => {
                    let a = self.candidates(ops[0])?;
                    a.iter().map(|p| mul(p, &constant(1i64 << k))).collect()
                }
                _ => Err("a shift by a number not known at compile time".into()),
            },
            Node::Conv if is_int(w, d) && is_int(w, ops[0]) => self.candidates(ops[0]),
            Node::Select => {
                let mut out = self.candidates(ops[1])?;
                for c in self.candidates(ops[2])? {
                    if !out.contains(&c) {
                        out.push(c);
                    }
                }
                Ok(out)
            }
            Node::Param(_) => {
                let args = self.incoming.get(&d).cloned().unwrap_or_default();
                if args.is_empty() {
                    return Err("the result of a call".into());
                }
                let mut out: Vec<Poly> = Vec::new();
                for a in args {
                    for c in self.candidates(a)? {
                        if !out.contains(&c) {
                            out.push(c);
                        }
                    }
                }
                Ok(out)
            }
            Node::Load => Err("a value loaded from memory".into()),
            n => Err(format!("`{}` of a thread index", n.name())),
        }
    }
}

fn is_int(w: &World, d: Def) -> bool {
    matches!(w.kind(w.type_of(d)), TypeKind::Int { .. })
}

/// What a block reads of a buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Footprint {
    /// Offsets around each thread's pixel: columns `dx.0..=dx.1`, rows `dy.0..=dy.1`.
    Box {
        /// Smallest and largest column offset.
        dx: (i64, i64),
        /// Smallest and largest row offset.
        dy: (i64, i64),
        /// Whether the row stride is a value known only at run time.
        rows: bool,
        /// Whether the boundary handler reads other elements (edges, reflections).
        edge: bool,
        /// Whether the boundary handler's reads replace each axis of the pixel that
        /// depends on the thread (columns, and rows where the pixel has them): where it
        /// does not, the kernel's reads stay in the buffer only through conditions around
        /// them, which a tile's halo would not respect.
        bounded: bool,
    },
    /// The index depends on no thread: every thread reads the same elements (a mask);
    /// `elements`, the smallest and largest index read, when every read's index is a
    /// constant.
    ThreadIndependent {
        /// The smallest and largest element index read, when all are constants.
        elements: Option<(i64, i64)>,
    },
    /// Not affine: why.
    NotAffine(String),
}

/// Where one load reads, relative to its thread's pixel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LoadOffset {
    /// The load.
    pub(crate) load: Def,
    /// Columns and rows from the pixel.
    pub(crate) dx: i64,
    pub(crate) dy: i64,
    /// Whether the boundary handler may read elsewhere (edges, reflections).
    pub(crate) edge: bool,
    /// The pointer to the buffer's elements that the load's element index counts from.
    pub(crate) base: Def,
}

/// The footprint of `loads` (each `load(mem, ptr)`, through one buffer) and where each
/// reads, when it is a box; otherwise the footprint that says why not.
pub(crate) fn analyze(
    ix: &mut Indices,
    loads: &[Def],
) -> Result<(Footprint, Vec<LoadOffset>), Footprint> {
    let w = ix.w;
    let mut all: Vec<Poly> = Vec::new();
    let mut per_load: Vec<(Def, Vec<Poly>, Def)> = Vec::new();
    let elem = loads.first().map(|&l| load_type(w, l));
    for &l in loads {
        if Some(load_type(w, l)) != elem {
            return Err(Footprint::NotAffine("reads of different types".into()));
        }
        // The element index: the sum of the `lea` indices down to the buffer, each into
        // an array of the type read.
        let mut p = w.ops(l)[1];
        let mut base_of_index = p;
        let mut index: Vec<Poly> = vec![Poly::new()];
        loop {
            match w.node(p) {
                Node::Lea => {
                    let base = w.ops(p)[0];
                    let TypeKind::Ptr { pointee, .. } = *w.kind(w.type_of(base)) else {
                        break;
                    };
                    if !matches!(w.kind(pointee), TypeKind::Array { elem: e, .. } if Some(*e) == elem)
                    {
                        return Err(Footprint::NotAffine(
                            "an address computed in elements of another type".into(),
                        ));
                    }
                    base_of_index = base;
                    let c = match ix.candidates(w.ops(p)[1]) {
                        Ok(c) => c,
                        Err(why) => return Err(Footprint::NotAffine(why)),
                    };
                    let mut next = Vec::new();
                    for a in &index {
                        for b in &c {
                            next.push(add(a, b, 1));
                        }
                    }
                    if next.len() > MAX_CANDIDATES {
                        return Err(Footprint::NotAffine("too many ways through selects".into()));
                    }
                    index = next;
                    p = base;
                }
                Node::Bitcast => p = w.ops(p)[0],
                Node::Extract => break,
                Node::Param(_) if w.ops(p)[0] == ix.kernel => break,
                _ => return Err(Footprint::NotAffine("a pointer chosen at run time".into())),
            }
        }
        for c in &index {
            if !all.contains(c) {
                all.push(c.clone());
            }
        }
        per_load.push((l, index, base_of_index));
    }
    let thread_part = |p: &Poly| -> Poly {
        p.iter()
            .filter(|(m, _)| m.iter().any(|a| a.of_thread()))
            .map(|(m, &c)| (m.clone(), c))
            .collect()
    };
    if all.iter().all(|p| thread_part(p).is_empty()) {
        // A mask: with every read at one constant index, the range and where each reads.
        let constant_at = |c: &[Poly]| match c {
            [p] if p.keys().all(|m| m.is_empty()) => Some(p.get(&Vec::new()).copied().unwrap_or(0)),
            _ => None,
        };
        let at: Option<Vec<i64>> = per_load.iter().map(|(_, c, _)| constant_at(c)).collect();
        let Some(at) = at.filter(|a| !a.is_empty()) else {
            return Err(Footprint::ThreadIndependent { elements: None });
        };
        let range = (
            *at.iter().min().unwrap_or(&0),
            *at.iter().max().unwrap_or(&0),
        );
        let offsets = per_load
            .iter()
            .zip(at)
            .map(|(&(load, _, base), i)| LoadOffset {
                load,
                dx: i,
                dy: 0,
                edge: false,
                base,
            })
            .collect();
        return Ok((
            Footprint::ThreadIndependent {
                elements: Some(range),
            },
            offsets,
        ));
    }
    // The pixel: the thread part of the candidates with threadIdx.x at +1.
    let pixel = all
        .iter()
        .map(thread_part)
        .find(|t| t.get(&vec![Atom::Tid(0)]) == Some(&1));
    let Some(pixel) = pixel else {
        return Err(Footprint::NotAffine(
            "no read is at the thread's own column".into(),
        ));
    };
    // The row stride S: the pixel's threadIdx.y part is threadIdx.y * S, S a polynomial
    // over uniform values (`pitch`, `40 + argc`, a literal); empty where the pixel has no
    // row.
    let stride: Poly = pixel
        .iter()
        .filter(|(m, _)| m.contains(&Atom::Tid(1)))
        .map(|(m, &c)| {
            (
                m.iter().copied().filter(|&a| a != Atom::Tid(1)).collect(),
                c,
            )
        })
        .collect();
    // A monomial of S that is not a constant, which says how many rows an offset is.
    let symbolic = stride
        .iter()
        .find(|(m, _)| !m.is_empty())
        .map(|(m, &c)| (m.clone(), c));
    // A candidate with the pixel's thread part as (columns, rows) from the pixel: its
    // uniform rest R is y * S + x, x a constant.
    let offset = |p: &Poly| -> Result<(i64, i64), Footprint> {
        let rest: Poly = p
            .iter()
            .filter(|(m, _)| !m.iter().any(|a| a.of_thread()))
            .map(|(m, &c)| (m.clone(), c))
            .collect();
        let y = match (&symbolic, stride.get(&Vec::new())) {
            (Some((m, c)), _) => {
                let r = rest.get(m).copied().unwrap_or(0);
                if r % c != 0 {
                    return Err(Footprint::NotAffine(
                        "an offset that is not a whole number of rows".into(),
                    ));
                }
                r / c
            }
            // A literal pitch: rows of it, and the rest across (the nearest row, so that
            // the columns lie within half a row of the pixel).
            (None, Some(&pitch)) if pitch > 1 => {
                let k = rest.get(&Vec::new()).copied().unwrap_or(0);
                let (mut y, x) = (k.div_euclid(pitch), k.rem_euclid(pitch));
                if 2 * x > pitch {
                    y += 1;
                }
                y
            }
            _ => 0,
        };
        let left = add(&rest, &mul(&stride, &constant(y)).unwrap_or_default(), -1);
        if left.keys().any(|m| !m.is_empty()) {
            return Err(Footprint::NotAffine(
                "an offset that is not a constant number of elements and rows".into(),
            ));
        }
        Ok((left.get(&Vec::new()).copied().unwrap_or(0), y))
    };
    let (mut dx, mut dy) = ((i64::MAX, i64::MIN), (i64::MAX, i64::MIN));
    let mut edge = false;
    // The thread part of a candidate along one axis (0: columns, 1: rows).
    let axis = |p: &Poly, a: u8| -> Poly {
        p.iter()
            .filter(|(m, _)| m.contains(&Atom::Tid(a)) || m.contains(&Atom::Bid(a)))
            .map(|(m, &c)| (m.clone(), c))
            .collect()
    };
    let (pixel_x, pixel_y) = (axis(&pixel, 0), axis(&pixel, 1));
    let (mut handled_x, mut handled_y) = (false, pixel_y.is_empty());
    let mut offsets = Vec::new();
    for (l, cands, base) in &per_load {
        let mut own: Option<(i64, i64)> = None;
        let mut load_edge = false;
        for p in cands {
            if thread_part(p) != pixel {
                load_edge = true;
                handled_x |= axis(p, 0) != pixel_x;
                handled_y |= axis(p, 1) != pixel_y;
                continue;
            }
            let (x, y) = offset(p)?;
            if own.is_some_and(|o| o != (x, y)) {
                return Err(Footprint::NotAffine(
                    "a read at two offsets from the pixel".into(),
                ));
            }
            own = Some((x, y));
            dx = (dx.0.min(x), dx.1.max(x));
            dy = (dy.0.min(y), dy.1.max(y));
        }
        edge |= load_edge;
        match own {
            Some((x, y)) => offsets.push(LoadOffset {
                load: *l,
                dx: x,
                dy: y,
                edge: load_edge,
                base: *base,
            }),
            None => {
                return Err(Footprint::NotAffine(
                    "a read away from the thread's pixel".into(),
                ))
            }
        }
    }
    let f = Footprint::Box {
        dx,
        dy,
        rows: symbolic.is_some(),
        edge,
        bounded: edge && handled_x && handled_y,
    };
    Ok((f, offsets))
}

/// The type `load` reads (its result is `(mem, T)`).
pub(crate) fn load_type(w: &World, load: Def) -> durin_ir::Type {
    let ty = w.type_of(load);
    w.types()
        .components(ty)
        .and_then(|c| c.get(1).copied())
        .unwrap_or(ty)
}
