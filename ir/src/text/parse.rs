//! The parser of the text form: tokens -> syntax tree -> world.
//!
//! Parsing is in two steps so that names may be used before they are defined: first the
//! whole file is read into items, then structs, continuations and parameters are created,
//! and statements are built on demand (with an explicit stack, so long chains cannot
//! overflow the native stack) with their types checked by [`crate::typing`].

use super::lex::{lex, Tok};
use crate::def::{Def, Node};
use crate::semantics::mask;
use crate::types::{AddrSpace, Type, TypeKind};
use crate::world::World;
use indexmap::IndexMap;
use rustc_hash::{FxBuildHasher, FxHashMap};
use std::fmt;

/// A syntax or meaning error in IR text, with its position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
    /// What is wrong.
    pub message: String,
    /// The source line.
    pub snippet: String,
}

impl ParseError {
    fn at(src: &str, offset: usize, message: String) -> ParseError {
        let offset = offset.min(src.len());
        let before = &src[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = src[line_start..offset].chars().count() + 1;
        let snippet = src[line_start..].lines().next().unwrap_or("").to_string();
        ParseError {
            line,
            column,
            message,
            snippet,
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}:{}: error: {}", self.line, self.column, self.message)?;
        writeln!(f, "    {}", self.snippet)?;
        write!(f, "    {}^", " ".repeat(self.column.saturating_sub(1)))
    }
}

impl std::error::Error for ParseError {}

/// How to parse.
#[derive(Clone, Copy, Debug, Default)]
pub struct ParseOptions {
    /// Normalize statements as they are built. Off by default, so that the world is exactly
    /// what the text says; the returned world normalizes from then on either way.
    pub normalize: bool,
}

/// Parses IR text into a new world (without normalizing what it reads).
pub fn parse(src: &str) -> Result<World, ParseError> {
    parse_with(src, ParseOptions::default())
}

/// Parses IR text into a new world.
pub fn parse_with(src: &str, options: ParseOptions) -> Result<World, ParseError> {
    parse_placed(src, options).map(|(w, _)| w)
}

/// Where the items of an IR text are defined: 1-based lines of continuations, parameters,
/// globals, statements and structs (a statement that normalization merged with an
/// earlier equal one has the earlier one's line).
#[derive(Clone, Debug, Default)]
pub struct Places {
    defs: FxHashMap<Def, usize>,
    structs: FxHashMap<Type, usize>,
}

impl Places {
    /// The line that defines `d`.
    pub fn def_line(&self, d: Def) -> Option<usize> {
        self.defs.get(&d).copied()
    }

    /// The line that defines the struct type `t`.
    pub fn struct_line(&self, t: Type) -> Option<usize> {
        self.structs.get(&t).copied()
    }
}

/// Parses IR text into a new world, and says where each item is defined.
pub fn parse_placed(src: &str, options: ParseOptions) -> Result<(World, Places), ParseError> {
    let toks = lex(src).map_err(|(at, m)| ParseError::at(src, at, m))?;
    let items = Parser {
        toks,
        pos: 0,
        depth: 0,
    }
    .file()
    .map_err(|(at, m)| ParseError::at(src, at, m))?;
    let mut w = World::new();
    w.set_normalize(options.normalize);
    let offsets = Builder::new(&mut w)
        .build(&items)
        .map_err(|(at, m)| ParseError::at(src, at, m))?;
    w.set_normalize(true);
    // Byte offsets to lines, by binary search in the lines' starts.
    let mut starts = vec![0usize];
    starts.extend(src.match_indices('\n').map(|(i, _)| i + 1));
    let line = |at: usize| starts.partition_point(|&s| s <= at);
    let mut places = Places::default();
    for (d, at) in offsets.defs {
        places.defs.entry(d).or_insert(line(at));
    }
    for (t, at) in offsets.structs {
        places.structs.insert(t, line(at));
    }
    Ok((w, places))
}

/// Byte offsets of what [`Builder::build`] defined.
#[derive(Default)]
struct Offsets {
    defs: Vec<(Def, usize)>,
    structs: Vec<(Type, usize)>,
}

type PResult<T> = Result<T, (usize, String)>;

// ----- syntax tree -----------------------------------------------------------------------------

enum TyAst {
    Name(String, usize),
    Ptr(Box<TyAst>, Option<(String, usize)>),
    Tuple(Vec<TyAst>),
    Array(Box<TyAst>, Option<u64>),
    Cn(Vec<TyAst>),
}

enum OpAst {
    Local(String, usize),
    Global(String, usize),
    Bool(bool),
    Lit(String, TyAst, usize),
    Bytes(Vec<u8>),
    Bot(TyAst),
    Launch(TyAst, usize),
}

struct StmtAst {
    name: String,
    pos: usize,
    ty: TyAst,
    op: String,
    op_pos: usize,
    ops: Vec<OpAst>,
}

struct ContAst {
    external: bool,
    no_inline: bool,
    name: String,
    pos: usize,
    params: Vec<(String, usize, TyAst)>,
    filter: Option<(Vec<OpAst>, usize)>,
    /// The statements written in the body (their names are global).
    stmts: Vec<StmtAst>,
    /// Callee and arguments.
    body: Option<(OpAst, Vec<OpAst>)>,
}

enum Item {
    Struct {
        name: String,
        pos: usize,
        fields: Vec<(String, TyAst)>,
    },
    Global {
        mutable: bool,
        name: String,
        pos: usize,
        init: OpAst,
    },
    Cont(ContAst),
    Stmt(StmtAst),
}

// ----- parser ------------------------------------------------------------------------------

const MAX_DEPTH: usize = 200;

struct Parser {
    toks: Vec<(Tok, usize)>,
    pos: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos].0
    }

    fn offset(&self) -> usize {
        self.toks[self.pos].1
    }

    fn next(&mut self) -> (Tok, usize) {
        let t = self.toks[self.pos].clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }

    fn error<T>(&self, expected: &str) -> PResult<T> {
        Err((
            self.offset(),
            format!("expected {expected}, found {}", self.peek().describe()),
        ))
    }

    fn eat(&mut self, c: char) -> bool {
        if *self.peek() == Tok::Punct(c) {
            self.next();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char) -> PResult<()> {
        if self.eat(c) {
            Ok(())
        } else {
            self.error(&format!("`{c}`"))
        }
    }

    fn is_ident(&self, s: &str) -> bool {
        matches!(self.peek(), Tok::Ident(i) if i == s)
    }

    fn ident(&mut self, what: &str) -> PResult<(String, usize)> {
        match self.peek().clone() {
            Tok::Ident(s) => Ok((s, self.next().1)),
            _ => self.error(what),
        }
    }

    fn local(&mut self) -> PResult<(String, usize)> {
        match self.peek().clone() {
            Tok::Local(s) => Ok((s, self.next().1)),
            _ => self.error("a `%name`"),
        }
    }

    fn global(&mut self) -> PResult<(String, usize)> {
        match self.peek().clone() {
            Tok::Global(s) => Ok((s, self.next().1)),
            _ => self.error("a `@name`"),
        }
    }

    /// `item,*` up to `close`.
    fn list<T>(
        &mut self,
        close: char,
        mut item: impl FnMut(&mut Self) -> PResult<T>,
    ) -> PResult<Vec<T>> {
        let mut v = Vec::new();
        if self.eat(close) {
            return Ok(v);
        }
        loop {
            v.push(item(self)?);
            if self.eat(close) {
                return Ok(v);
            }
            self.expect(',')?;
        }
    }

    fn file(mut self) -> PResult<Vec<Item>> {
        let mut items = Vec::new();
        while *self.peek() != Tok::Eof {
            items.push(self.item()?);
        }
        Ok(items)
    }

    fn item(&mut self) -> PResult<Item> {
        if matches!(self.peek(), Tok::Local(_)) {
            return Ok(Item::Stmt(self.stmt()?));
        }
        let (kw, at) =
            self.ident("`cont`, `extern`, `noinline`, `global`, `struct` or a statement")?;
        match kw.as_str() {
            "struct" => {
                let (name, pos) = self.ident("a struct name")?;
                self.expect('{')?;
                let fields = self.list('}', |p| {
                    let (f, _) = p.ident("a field name")?;
                    p.expect(':')?;
                    Ok((f, p.ty()?))
                })?;
                Ok(Item::Struct { name, pos, fields })
            }
            "global" => {
                let mutable = if self.is_ident("mut") {
                    self.next();
                    true
                } else {
                    false
                };
                let (name, pos) = self.global()?;
                self.expect('=')?;
                let init = self.operand()?;
                Ok(Item::Global {
                    mutable,
                    name,
                    pos,
                    init,
                })
            }
            "extern" | "noinline" => {
                let external = kw == "extern";
                let (mut c, mut at) = self.ident("`cont`")?;
                let no_inline = !external || c == "noinline";
                if external && no_inline {
                    (c, at) = self.ident("`cont`")?;
                }
                if c != "cont" {
                    return Err((at, format!("expected `cont` after `{kw}`")));
                }
                Ok(Item::Cont(self.cont(external, no_inline)?))
            }
            "cont" => Ok(Item::Cont(self.cont(false, false)?)),
            _ => Err((
                at,
                format!(
                    "expected `cont`, `extern`, `noinline`, `global` or `struct`, found `{kw}`"
                ),
            )),
        }
    }

    fn cont(&mut self, external: bool, no_inline: bool) -> PResult<ContAst> {
        let (name, pos) = self.global()?;
        self.expect('(')?;
        let params = self.list(')', |p| {
            let (n, at) = p.local()?;
            p.expect(':')?;
            Ok((n, at, p.ty()?))
        })?;
        let filter = if self.is_ident("filter") {
            let at = self.next().1;
            self.expect('(')?;
            Some((self.list(')', Self::operand)?, at))
        } else {
            None
        };
        let mut stmts = Vec::new();
        let body = if self.eat('{') {
            while matches!(self.peek(), Tok::Local(_)) {
                stmts.push(self.stmt()?);
            }
            if !self.is_ident("jump") {
                return self.error("a statement or `jump`");
            }
            self.next();
            let callee = self.operand()?;
            self.expect('(')?;
            let args = self.list(')', Self::operand)?;
            self.expect('}')?;
            Some((callee, args))
        } else {
            None
        };
        Ok(ContAst {
            external,
            no_inline,
            name,
            pos,
            params,
            filter,
            stmts,
            body,
        })
    }

    fn stmt(&mut self) -> PResult<StmtAst> {
        let (name, pos) = self.local()?;
        self.expect(':')?;
        let ty = self.ty()?;
        self.expect('=')?;
        let (op, op_pos) = self.ident("an operation name")?;
        self.expect('(')?;
        let ops = self.list(')', Self::operand)?;
        Ok(StmtAst {
            name,
            pos,
            ty,
            op,
            op_pos,
            ops,
        })
    }

    fn operand(&mut self) -> PResult<OpAst> {
        let at = self.offset();
        match self.peek().clone() {
            Tok::Local(n) => {
                self.next();
                Ok(OpAst::Local(n, at))
            }
            Tok::Global(n) => {
                self.next();
                Ok(OpAst::Global(n, at))
            }
            Tok::Ident(i) if i == "true" || i == "false" => {
                self.next();
                Ok(OpAst::Bool(i == "true"))
            }
            Tok::Ident(i) if i == "bot" => {
                self.next();
                self.expect(':')?;
                Ok(OpAst::Bot(self.ty()?))
            }
            Tok::Ident(i) if i == "launch" => {
                self.next();
                self.expect(':')?;
                Ok(OpAst::Launch(self.ty()?, at))
            }
            Tok::Number(n) => {
                self.next();
                self.expect(':')?;
                Ok(OpAst::Lit(n, self.ty()?, at))
            }
            Tok::Bytes(b) => {
                self.next();
                Ok(OpAst::Bytes(b))
            }
            _ => self.error(
                "an operand (`%name`, `@name`, a literal, `b\"bytes\"`, `bot:T` or `launch:T`)",
            ),
        }
    }

    fn ty(&mut self) -> PResult<TyAst> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err((
                self.offset(),
                format!("types nest deeper than {MAX_DEPTH} levels"),
            ));
        }
        let t = self.ty_inner();
        self.depth -= 1;
        t
    }

    fn ty_inner(&mut self) -> PResult<TyAst> {
        let at = self.offset();
        if self.eat('(') {
            return Ok(TyAst::Tuple(self.list(')', Self::ty)?));
        }
        if self.eat('[') {
            let elem = self.ty()?;
            let len = if self.eat('*') {
                match self.next() {
                    (Tok::Number(n), at) => Some(
                        n.parse::<u64>()
                            .map_err(|_| (at, format!("invalid array length `{n}`")))?,
                    ),
                    (_, at) => return Err((at, "expected an array length".into())),
                }
            } else {
                None
            };
            self.expect(']')?;
            return Ok(TyAst::Array(Box::new(elem), len));
        }
        let (name, at) = match self.peek().clone() {
            Tok::Ident(n) => (n, self.next().1),
            _ => {
                return Err((
                    at,
                    format!("expected a type, found {}", self.peek().describe()),
                ))
            }
        };
        match name.as_str() {
            "ptr" => {
                self.expect('(')?;
                let pointee = self.ty()?;
                let space = if self.eat(',') {
                    Some(self.ident("an address space")?)
                } else {
                    None
                };
                self.expect(')')?;
                Ok(TyAst::Ptr(Box::new(pointee), space))
            }
            "cn" => {
                self.expect('(')?;
                Ok(TyAst::Cn(self.list(')', Self::ty)?))
            }
            _ => Ok(TyAst::Name(name, at)),
        }
    }
}

// ----- building the world --------------------------------------------------------------------

#[derive(Clone, Copy)]
enum Slot {
    Todo,
    Busy,
    Done(Def),
}

struct Builder<'w, 'a> {
    w: &'w mut World,
    structs: FxHashMap<String, Type>,
    /// `@name` of each continuation and global item.
    nominals: FxHashMap<String, Def>,
    globals: FxHashMap<String, (&'a Item, Slot)>,
    /// `%name` of parameters.
    params: FxHashMap<String, Def>,
    /// `%name` of statements.
    stmts: IndexMap<String, (&'a StmtAst, Slot), FxBuildHasher>,
    depth: usize,
}

impl<'w, 'a> Builder<'w, 'a> {
    fn new(w: &'w mut World) -> Self {
        Builder {
            w,
            structs: FxHashMap::default(),
            nominals: FxHashMap::default(),
            globals: FxHashMap::default(),
            params: FxHashMap::default(),
            stmts: IndexMap::default(),
            depth: 0,
        }
    }

    fn build(mut self, items: &'a [Item]) -> PResult<Offsets> {
        // Structs first: their names may be used by any type.
        for item in items {
            if let Item::Struct { name, pos, .. } = item {
                if crate::text::is_reserved_type_name(name) {
                    return Err((*pos, format!("`{name}` is a builtin type name")));
                }
                let t = self.w.struct_type(name);
                if self.structs.insert(name.clone(), t).is_some() {
                    return Err((*pos, format!("struct `{name}` is defined twice")));
                }
            }
        }
        for item in items {
            if let Item::Struct { name, fields, .. } = item {
                let fs = fields
                    .iter()
                    .map(|(f, t)| Ok((f.clone(), self.ty(t)?)))
                    .collect::<PResult<Vec<_>>>()?;
                self.w.set_struct_fields(self.structs[name], fs);
            }
        }
        // Continuations and their parameters, in file order; statements by name.
        for item in items {
            match item {
                Item::Cont(c) => {
                    let tys = c
                        .params
                        .iter()
                        .map(|p| self.ty(&p.2))
                        .collect::<PResult<Vec<_>>>()?;
                    let k = self.w.cont(&tys, &debug_name(&c.name));
                    self.define_nominal(&c.name, c.pos, k)?;
                    if c.external {
                        self.w.make_external(k);
                    }
                    if c.no_inline {
                        self.w.set_no_inline(k);
                    }
                    for (i, (pname, at, _)) in c.params.iter().enumerate() {
                        let p = self.w.param(k, i);
                        self.w.set_name(p, &debug_name(pname));
                        self.define_local(pname, *at)?;
                        self.params.insert(pname.clone(), p);
                    }
                    for s in &c.stmts {
                        self.add_stmt(s)?;
                    }
                }
                Item::Global { name, pos, .. } => {
                    if self
                        .globals
                        .insert(name.clone(), (item, Slot::Todo))
                        .is_some()
                        || self.nominals.contains_key(name)
                    {
                        return Err((*pos, format!("`@{name}` is defined twice")));
                    }
                }
                Item::Stmt(s) => self.add_stmt(s)?,
                Item::Struct { .. } => {}
            }
        }
        // Globals in file order (their initializers may use statements and other globals).
        for item in items {
            if let Item::Global { name, pos, .. } = item {
                self.global(name, *pos)?;
            }
        }
        // Every statement, so that each is checked even if nothing uses it.
        for i in 0..self.stmts.len() {
            self.stmt(i)?;
        }
        for item in items {
            let Item::Cont(c) = item else { continue };
            let k = self.nominals[&c.name];
            if let Some((filters, at)) = &c.filter {
                if filters.len() != c.params.len() {
                    let n = c.params.len();
                    return Err((
                        *at,
                        format!(
                            "expected {n} filter(s), one per parameter, found {}",
                            filters.len()
                        ),
                    ));
                }
                for (i, f) in filters.iter().enumerate() {
                    let d = self.operand(f)?;
                    if !self.w.types().is_bool(self.w.type_of(d)) {
                        return Err((op_pos(f, *at), "a filter must be a bool".into()));
                    }
                    self.w.set_filter(k, i, d);
                }
            }
            if let Some((callee, args)) = &c.body {
                let cd = self.operand(callee)?;
                let ads = args
                    .iter()
                    .map(|a| self.operand(a))
                    .collect::<PResult<Vec<_>>>()?;
                let at = op_pos(callee, c.pos);
                self.w
                    .try_set_body(k, cd, &ads)
                    .map_err(|e| (at, format!("invalid jump: {e}")))?;
            }
        }
        Ok(self.offsets(items))
    }

    /// Where each item and statement was defined (statements before the items they are
    /// in, so that a merged statement keeps its first line).
    fn offsets(&mut self, items: &[Item]) -> Offsets {
        let mut o = Offsets::default();
        for (s, slot) in self.stmts.values() {
            if let Slot::Done(d) = slot {
                o.defs.push((*d, s.pos));
            }
        }
        for item in items {
            match item {
                Item::Struct { name, pos, .. } => o.structs.push((self.structs[name], *pos)),
                Item::Global { name, pos, .. } => {
                    if let Some(&g) = self.nominals.get(name) {
                        o.defs.push((g, *pos));
                    }
                }
                Item::Cont(c) => {
                    let k = self.nominals[&c.name];
                    o.defs.push((k, c.pos));
                    for (i, (_, at, _)) in c.params.iter().enumerate() {
                        o.defs.push((self.w.param(k, i), *at));
                    }
                }
                Item::Stmt(_) => {}
            }
        }
        o
    }

    fn define_nominal(&mut self, name: &str, at: usize, d: Def) -> PResult<()> {
        if self.nominals.insert(name.to_string(), d).is_some() {
            return Err((at, format!("`@{name}` is defined twice")));
        }
        Ok(())
    }

    fn define_local(&self, name: &str, at: usize) -> PResult<()> {
        if self.params.contains_key(name) || self.stmts.contains_key(name) {
            return Err((at, format!("`%{name}` is defined twice")));
        }
        Ok(())
    }

    fn add_stmt(&mut self, s: &'a StmtAst) -> PResult<()> {
        self.define_local(&s.name, s.pos)?;
        self.stmts.insert(s.name.clone(), (s, Slot::Todo));
        Ok(())
    }

    fn ty(&mut self, t: &TyAst) -> PResult<Type> {
        Ok(match t {
            TyAst::Name(n, at) => match n.as_str() {
                "bool" => self.w.ty_bool(),
                "mem" => self.w.ty_mem(),
                "i8" | "i16" | "i32" | "i64" | "u8" | "u16" | "u32" | "u64" => {
                    let bits = n[1..].parse().unwrap_or(32);
                    self.w.ty_int(bits, n.starts_with('i'))
                }
                "f16" | "f32" | "f64" => self.w.ty_float(n[1..].parse().unwrap_or(32)),
                _ => *self
                    .structs
                    .get(n)
                    .ok_or_else(|| (*at, format!("unknown type `{n}`")))?,
            },
            TyAst::Ptr(p, space) => {
                let p = self.ty(p)?;
                let space = match space {
                    None => AddrSpace::Generic,
                    Some((s, at)) => AddrSpace::ALL
                        .into_iter()
                        .find(|a| a.name() == s)
                        .ok_or_else(|| (*at, format!("unknown address space `{s}` (expected generic, global, shared or constant)")))?,
                };
                self.w.ty_ptr(p, space)
            }
            TyAst::Tuple(ts) => {
                let ts = ts.iter().map(|t| self.ty(t)).collect::<PResult<Vec<_>>>()?;
                self.w.ty_tuple(&ts)
            }
            TyAst::Array(e, n) => {
                let e = self.ty(e)?;
                self.w.ty_array(e, *n)
            }
            TyAst::Cn(ts) => {
                let ts = ts.iter().map(|t| self.ty(t)).collect::<PResult<Vec<_>>>()?;
                self.w.ty_cont(&ts)
            }
        })
    }

    fn global(&mut self, name: &str, at: usize) -> PResult<Def> {
        if let Some(&d) = self.nominals.get(name) {
            return Ok(d);
        }
        let Some(&(item, slot)) = self.globals.get(name) else {
            return Err((at, format!("unknown name `@{name}`")));
        };
        let Item::Global {
            mutable, init, pos, ..
        } = item
        else {
            unreachable!("globals map holds globals")
        };
        if matches!(slot, Slot::Busy) || self.depth > MAX_DEPTH {
            return Err((
                *pos,
                format!("the initializer of `@{name}` depends on itself"),
            ));
        }
        self.globals.insert(name.to_string(), (item, Slot::Busy));
        self.depth += 1;
        let init = self.operand(init)?;
        self.depth -= 1;
        let g = self.w.global(init, *mutable, &debug_name(name));
        self.nominals.insert(name.to_string(), g);
        Ok(g)
    }

    /// The def of an operand; statements it names are built first.
    fn operand(&mut self, op: &OpAst) -> PResult<Def> {
        match op {
            OpAst::Local(n, at) => {
                if let Some(&p) = self.params.get(n) {
                    return Ok(p);
                }
                let i = self
                    .stmts
                    .get_index_of(n)
                    .ok_or_else(|| (*at, format!("unknown name `%{n}`")))?;
                self.stmt(i)
            }
            OpAst::Global(n, at) => self.global(n, *at),
            OpAst::Bool(b) => Ok(self.w.lit_bool(*b)),
            OpAst::Bot(t) => {
                let t = self.ty(t)?;
                Ok(self.w.bottom(t))
            }
            OpAst::Launch(t, at) => {
                let t = self.ty(t)?;
                crate::launch::check_type(self.w, t).map_err(|m| (*at, m))?;
                Ok(self.w.launch(t))
            }
            OpAst::Lit(text, t, at) => {
                let ty = self.ty(t)?;
                let bits = literal_bits(self.w, ty, text).map_err(|m| (*at, m))?;
                Ok(self.w.lit(ty, bits))
            }
            OpAst::Bytes(b) => Ok(self.w.bytes(b)),
        }
    }

    /// Builds statement `i` and every statement it needs, without recursion.
    fn stmt(&mut self, i: usize) -> PResult<Def> {
        let mut stack = vec![i];
        while let Some(&top) = stack.last() {
            let (s, slot) = self.stmts[top];
            if let Slot::Done(_) = slot {
                stack.pop();
                continue;
            }
            self.stmts[top].1 = Slot::Busy;
            let mut ready = true;
            for op in &s.ops {
                let OpAst::Local(n, at) = op else { continue };
                let Some(j) = self.stmts.get_index_of(n) else {
                    continue;
                };
                match self.stmts[j].1 {
                    Slot::Done(_) => {}
                    Slot::Busy => return Err((*at, format!("`%{n}` depends on itself"))),
                    Slot::Todo => {
                        stack.push(j);
                        ready = false;
                        break;
                    }
                }
            }
            if !ready {
                continue;
            }
            let node = Node::from_name(&s.op)
                .ok_or_else(|| (s.op_pos, format!("unknown operation `{}`", s.op)))?;
            let ty = self.ty(&s.ty)?;
            let ops = s
                .ops
                .iter()
                .map(|o| self.operand(o))
                .collect::<PResult<Vec<_>>>()?;
            let d = self
                .w
                .try_build(node, Some(ty), &ops)
                .map_err(|e| (s.op_pos, e))?;
            if self.w.name(d).is_none() && !self.w.node(d).is_nominal() {
                self.w.set_name(d, &debug_name(&s.name));
            }
            self.stmts[top].1 = Slot::Done(d);
            stack.pop();
        }
        match self.stmts[i].1 {
            Slot::Done(d) => Ok(d),
            _ => unreachable!("the loop finishes statement {i}"),
        }
    }
}

fn op_pos(op: &OpAst, default: usize) -> usize {
    match op {
        OpAst::Local(_, at) | OpAst::Global(_, at) | OpAst::Lit(_, _, at) => *at,
        _ => default,
    }
}

/// Names made only of digits are the printer's numbering, not debug names.
fn debug_name(name: &str) -> String {
    if name.bytes().all(|c| c.is_ascii_digit()) {
        String::new()
    } else {
        name.to_string()
    }
}

/// The raw bits of literal `text` of type `ty`.
pub(crate) fn literal_bits(w: &World, ty: Type, text: &str) -> Result<u64, String> {
    let bad = || {
        format!(
            "invalid literal `{text}` for type {}",
            w.types().display(ty)
        )
    };
    let hex = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X"));
    let kind = w.kind(ty).clone();
    let width = w
        .types()
        .prim_bits(ty)
        .ok_or_else(|| format!("literal of non-primitive type {}", w.types().display(ty)))?;
    if let Some(h) = hex {
        let v = u64::from_str_radix(h, 16).map_err(|_| bad())?;
        if mask(width, v) != v {
            return Err(format!("`{text}` does not fit in {} bits", width));
        }
        return Ok(v);
    }
    match kind {
        TypeKind::Bool => Err("write `bool` literals as `true` or `false`".into()),
        TypeKind::Int { bits, signed } => {
            let v: i128 = text.parse().map_err(|_| bad())?;
            let (lo, hi) = if signed {
                (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
            } else {
                (0, (1i128 << bits) - 1)
            };
            if v < lo || v > hi {
                return Err(format!(
                    "`{text}` is out of range for {}",
                    w.types().display(ty)
                ));
            }
            Ok(mask(bits as u32, v as u64))
        }
        TypeKind::Float { bits } => match bits {
            32 => Ok(text.parse::<f32>().map_err(|_| bad())?.to_bits() as u64),
            64 => Ok(text.parse::<f64>().map_err(|_| bad())?.to_bits()),
            _ => {
                let x = text.parse::<f32>().map_err(|_| bad())?;
                Ok(half::f16::from_f32(x).to_bits() as u64)
            }
        },
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every byte value prints as a byte string that reads back as the same bytes, and a
    /// second print is the same text.
    #[test]
    fn byte_strings_read_back_as_printed() {
        let all: Vec<u8> = (0..=255).collect();
        let mut w = World::new();
        let b = w.bytes(&all);
        let _ = w.global(b, false, "all");
        let text = crate::text::print(&w);
        let read = parse(&text).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
        let g2 = read.nominals().find(|&n| read.name(n) == Some("all"));
        let init = g2.map(|g| read.ops(g)[0]).expect("the global reads back");
        assert_eq!(read.bytes_of(init), Some(&all[..]));
        assert_eq!(read.type_of(init), read.type_of(b), "{text}");
        assert_eq!(crate::text::print(&read), text);
    }

    /// A global made between two continuations (as the front end makes a string's) reads
    /// back to the same text.
    #[test]
    fn a_global_between_continuations_reads_back_the_same() {
        let mut w = World::new();
        let mem = w.ty_mem();
        let u8t = w.ty_int(8, false);
        let bytes = w.ty_array(u8t, None);
        let p = w.ty_ptr(bytes, crate::AddrSpace::Generic);
        let first = w.cont(&[mem], "first");
        w.make_external(first);
        let text = w.bytes(b"hi\0");
        let g = w.global(text, false, "s");
        let second = w.cont(&[mem, p], "second");
        w.make_external(second);
        let s = w.bitcast(p, g);
        let m = w.param(first, 0);
        w.set_body(first, second, &[m, s]);
        let printed = crate::text::print(&w);
        let read = parse(&printed).unwrap_or_else(|e| panic!("{e:?}\n{printed}"));
        assert_eq!(crate::text::print(&read), printed);
    }

    #[test]
    fn a_bad_byte_string_is_an_error_at_its_place() {
        let cases = [
            ("global @g = b\"ab", 1, 13, "without its closing"),
            ("global @g = b\"a\\qb\"", 1, 16, "unknown escape"),
            ("global @g = b\"\\x4\"", 1, 15, "two hex digits"),
            ("global @g = b\"\\x+1\"", 1, 15, "two hex digits"),
            ("global @g = b\"a\tb\"", 1, 16, "control character 0x09"),
        ];
        for (src, line, column, message) in cases {
            let e = parse(src).expect_err(src);
            assert_eq!((e.line, e.column), (line, column), "{src}: {e:?}");
            assert!(e.message.contains(message), "{src}: {e:?}");
        }
    }

    #[test]
    fn places_give_the_defining_line_of_every_item() {
        let src = "; a comment\n\
                   struct P { x: i32 }\n\
                   extern cont @main(%m: mem, %a: i32,\n    %ret: cn(mem, i32)) {\n\
                   \x20   %b: i32 = add(%a, 1:i32)\n\
                   \x20   jump @next(%m, %b)\n}\n\
                   cont @next(%n: mem, %c: i32) {\n    jump %ret(%n, %c)\n}\n";
        let (mut w, places) = parse_placed(src, ParseOptions::default()).expect("valid text");
        let main = w.continuations().find(|&k| w.is_external(k)).expect("main");
        assert_eq!(places.def_line(main), Some(3));
        assert_eq!(places.def_line(w.param(main, 2)), Some(4));
        let Some((next, args)) = w.body(main) else {
            panic!("main has a body")
        };
        assert_eq!(places.def_line(next), Some(8));
        assert_eq!(places.def_line(args[1]), Some(5));
        let p = w.types().structs().next().expect("struct P");
        assert_eq!(places.struct_line(p), Some(2));
    }
}
