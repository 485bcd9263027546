//! The interpreter's memory: blocks of bytes, addressed by byte offsets.
//!
//! Every block records which of its bytes were written, so a read of memory never written
//! is caught; pointers and continuations stored in memory are kept as values beside the
//! bytes (at their offset), so they come back whole. A pointer remembers the last array
//! index it was computed with, so an access out of bounds is reported in elements
//! ("index 15 of 4 elements") where it went through an array.

use super::Value;
use crate::def::Def;
use crate::layout::{field_offsets, size_align};
use crate::types::{Type, TypeKind};
use crate::world::World;
use std::collections::BTreeMap;
use std::rc::Rc;

/// A pointer: a block, a byte offset in it, and the array step that made it (for
/// messages).
#[derive(Clone, Debug)]
pub struct Pointer {
    pub(super) block: u32,
    pub(super) offset: i64,
    /// The element size of the last array index applied (0: none).
    pub(super) elem: u32,
    /// That index.
    pub(super) index: i64,
}

impl PartialEq for Pointer {
    fn eq(&self, other: &Self) -> bool {
        self.block == other.block && self.offset == other.offset
    }
}

impl Pointer {
    pub(super) fn to_block(block: u32) -> Pointer {
        Pointer {
            block,
            offset: 0,
            elem: 0,
            index: 0,
        }
    }

    /// The block number (for printing).
    pub fn block(&self) -> u32 {
        self.block
    }

    /// Whether the pointer was made from an integer that addresses no block (0: null).
    pub fn is_from_integer(&self) -> bool {
        self.block == NO_BLOCK
    }
}

/// The block of a pointer made from an integer that addresses no block; its offset is the
/// integer.
const NO_BLOCK: u32 = u32::MAX;

/// The integer address of block `b`'s first byte: blocks sit 4 GiB apart from 4 GiB up, so
/// no block's address is 0 and a pointer made back from an address finds its block.
fn block_base(b: u32) -> u64 {
    (b as u64 + 1) << 32
}

/// How a block was made, and whether `release` freed it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum BlockState {
    /// A slot, a global or the program's arguments: never released.
    Fixed,
    /// Memory from the runtime's `alloc`, not yet released.
    Heap,
    /// Memory from `alloc` after its `release`.
    Released,
}

/// Which code may access a block: any, host code only (memory the host's `alloc`
/// returned), or a device's kernels only (memory `alloc` returned for a GPU), as on a
/// machine with a GPU, where the two are different memories.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Owner {
    Any,
    Host,
    Device(i32),
}

struct Block {
    /// Who may access it, the call that allocated it (for `Host` and `Device`) and the
    /// program's code that ran last then.
    owner: (Owner, Option<Def>, Option<Def>),
    bytes: Vec<u8>,
    /// One bit per byte: written.
    init: Vec<u64>,
    /// Pointers and continuations stored in the block, by offset.
    refs: BTreeMap<u64, Value>,
    writable: bool,
    state: BlockState,
}

/// How a value of one type sits in memory, computed once per type.
#[derive(Debug)]
pub(super) enum Shape {
    /// A number or bool of this many bytes.
    Bits(u8),
    /// A pointer or continuation (8 bytes).
    Ref,
    /// A tuple or struct: its parts at their offsets.
    Agg(Vec<(u64, Rc<Shape>)>),
    /// A definite array: `n` elements, `stride` bytes apart.
    Array {
        n: u64,
        stride: u64,
        elem: Rc<Shape>,
    },
    /// A type with no bytes (`mem`, the unit tuple has `Agg` with no parts).
    Empty,
}

impl Shape {
    pub(super) fn of(w: &World, t: Type) -> Shape {
        match w.kind(t) {
            TypeKind::Bool => Shape::Bits(1),
            TypeKind::Int { bits, .. } | TypeKind::Float { bits } => Shape::Bits(bits / 8),
            TypeKind::Ptr { .. } | TypeKind::Cont(_) => Shape::Ref,
            TypeKind::Array { elem, len: Some(n) } => {
                let (stride, _) = size_align(w, *elem);
                Shape::Array {
                    n: *n,
                    stride,
                    elem: Rc::new(Shape::of(w, *elem)),
                }
            }
            TypeKind::Tuple(_) | TypeKind::Struct(_) => {
                let parts = w.types().components(t).unwrap_or_default();
                let offs = field_offsets(w, t);
                Shape::Agg(
                    parts
                        .iter()
                        .zip(offs)
                        .map(|(&p, o)| (o, Rc::new(Shape::of(w, p))))
                        .collect(),
                )
            }
            _ => Shape::Empty,
        }
    }

    /// The bytes a value of this shape covers (its last part's end: trailing padding is
    /// not accessed).
    pub(super) fn size(&self) -> u64 {
        match self {
            Shape::Bits(n) => *n as u64,
            Shape::Ref => 8,
            Shape::Agg(parts) => parts.last().map_or(0, |(off, s)| off + s.size()),
            Shape::Array { n: 0, .. } => 0,
            Shape::Array { n, stride, elem } => {
                (n - 1).saturating_mul(*stride).saturating_add(elem.size())
            }
            Shape::Empty => 0,
        }
    }
}

/// All blocks, with a bound on the bytes alive.
pub(super) struct Memory {
    blocks: Vec<Block>,
    live: u64,
    max: u64,
}

/// The message of an access to released memory.
pub(super) const USE_AFTER_RELEASE: &str = "use of memory after its `release`";

impl Memory {
    pub(super) fn new(max: u64) -> Memory {
        Memory {
            blocks: Vec::new(),
            live: 0,
            max,
        }
    }

    /// A new block of `size` bytes, none written.
    pub(super) fn alloc(
        &mut self,
        size: u64,
        writable: bool,
        state: BlockState,
    ) -> Result<Pointer, String> {
        if self.live.saturating_add(size) > self.max {
            return Err(format!(
                "allocation of {size} bytes exceeds the interpreter's memory limit of {} bytes \
                 ({} in use; `--interp-memory` raises it)",
                self.max, self.live
            ));
        }
        self.live += size;
        let n = size as usize;
        self.blocks.push(Block {
            owner: (Owner::Any, None, None),
            bytes: vec![0; n],
            init: vec![0; n.div_ceil(64)],
            refs: BTreeMap::new(),
            writable,
            state,
        });
        Ok(Pointer::to_block(self.blocks.len() as u32 - 1))
    }

    /// Makes the block of `p` (a new one) accessible only to `owner`; `at` allocated it,
    /// after the program's code `program` ran.
    pub(super) fn set_owner(&mut self, p: &Pointer, owner: Owner, at: Def, program: Option<Def>) {
        if let Some(b) = self.blocks.get_mut(p.block as usize) {
            b.owner = (owner, Some(at), program);
        }
    }

    /// Who may access the block `p` points into, the call that allocated it and the
    /// program's code that ran last then.
    pub(super) fn owner(&self, p: &Pointer) -> (Owner, Option<Def>, Option<Def>) {
        match self.blocks.get(p.block as usize) {
            Some(b) => b.owner,
            None => (Owner::Any, None, None),
        }
    }

    /// The integer a pointer converts to (`conv` to an integer type, before truncation).
    pub(super) fn address(&self, p: &Pointer) -> u64 {
        match p.block {
            NO_BLOCK => p.offset as u64,
            b => block_base(b).wrapping_add(p.offset as u64),
        }
    }

    /// The pointer an integer converts to: into the block whose address range holds it,
    /// else a pointer that addresses no block.
    pub(super) fn at_address(&self, a: u64) -> Pointer {
        let hi = a >> 32;
        let block = match hi.checked_sub(1) {
            Some(b) if (b as usize) < self.blocks.len() => b as u32,
            _ => NO_BLOCK,
        };
        let offset = match block {
            NO_BLOCK => a as i64,
            b => a.wrapping_sub(block_base(b)) as i64,
        };
        Pointer {
            block,
            offset,
            elem: 0,
            index: 0,
        }
    }

    /// The block `p` points into; an error for a pointer made from an integer.
    fn block_of(&self, p: &Pointer) -> Result<usize, String> {
        match p.block {
            NO_BLOCK if p.offset == 0 => Err("access through a null pointer".into()),
            NO_BLOCK => Err(format!(
                "access at address {:#x}, made from an integer: no memory is there",
                p.offset
            )),
            b => Ok(b as usize),
        }
    }

    /// The block and offset of `size` bytes at `p`, checked.
    fn range(&self, p: &Pointer, size: u64) -> Result<(usize, usize), String> {
        let b = &self.blocks[self.block_of(p)?];
        if b.state == BlockState::Released {
            return Err(USE_AFTER_RELEASE.into());
        }
        let len = b.bytes.len() as i64;
        let end = p.offset.checked_add(size as i64);
        if p.offset < 0 || end.is_none_or(|e| e > len) {
            return Err(out_of_bounds(p, size, len));
        }
        Ok((p.block as usize, p.offset as usize))
    }

    /// Reads a value of shape `s` at `p`. Bytes never written read as `Undef` (the whole
    /// value, for a scalar).
    pub(super) fn load(&self, s: &Shape, p: &Pointer) -> Result<Value, String> {
        let (b, off) = self.range(p, s.size())?;
        self.read(&self.blocks[b], s, off)
    }

    fn read(&self, b: &Block, s: &Shape, off: usize) -> Result<Value, String> {
        Ok(match s {
            Shape::Bits(n) => {
                let n = *n as usize;
                if !all_init(&b.init, off, n) {
                    return Ok(Value::Undef);
                }
                let mut raw = [0u8; 8];
                raw[..n].copy_from_slice(&b.bytes[off..off + n]);
                Value::Bits(u64::from_le_bytes(raw))
            }
            Shape::Ref => {
                if !all_init(&b.init, off, 8) {
                    return Ok(Value::Undef);
                }
                match b.refs.get(&(off as u64)) {
                    Some(v) => v.clone(),
                    None => {
                        return Err(
                            "load of a pointer or function from memory that holds a number".into(),
                        )
                    }
                }
            }
            Shape::Agg(parts) => Value::Agg(Rc::new(
                parts
                    .iter()
                    .map(|(o, s)| self.read(b, s, off + *o as usize))
                    .collect::<Result<_, _>>()?,
            )),
            Shape::Array { n, stride, elem } => Value::Agg(Rc::new(
                (0..*n as usize)
                    .map(|i| self.read(b, elem, off + i * *stride as usize))
                    .collect::<Result<_, _>>()?,
            )),
            Shape::Empty => Value::Agg(Rc::new(Vec::new())),
        })
    }

    /// Writes `v` of shape `s` at `p`.
    pub(super) fn store(&mut self, s: &Shape, p: &Pointer, v: &Value) -> Result<(), String> {
        let (b, off) = self.range(p, s.size())?;
        let block = &mut self.blocks[b];
        if !block.writable {
            return Err("store to an immutable global".into());
        }
        write(block, s, off, v)
    }

    /// Makes the block of `p` read-only (an immutable global, once initialized).
    pub(super) fn freeze(&mut self, p: &Pointer) {
        self.blocks[p.block as usize].writable = false;
    }

    /// Whether `p` is the start of a block `alloc` returned; releases it.
    pub(super) fn release(&mut self, p: &Pointer) -> Result<(), String> {
        if p.block == NO_BLOCK && p.offset == 0 {
            // Releasing null is allowed, as `free(NULL)` is.
            return Ok(());
        }
        let b = self.block_of(p)?;
        let b = &mut self.blocks[b];
        match b.state {
            BlockState::Heap if p.offset == 0 => {
                b.state = BlockState::Released;
                self.live -= b.bytes.len() as u64;
                b.bytes = Vec::new();
                b.init = Vec::new();
                b.refs.clear();
                Ok(())
            }
            BlockState::Released => Err("memory released twice".into()),
            _ => Err("release of memory that `alloc` did not return".into()),
        }
    }

    /// Copies `size` bytes (with what was written and what is stored) from `src` to `dst`.
    pub(super) fn copy(&mut self, src: &Pointer, dst: &Pointer, size: u64) -> Result<(), String> {
        let (sb, so) = self.range(src, size)?;
        let (db, d) = self.range(dst, size)?;
        if !self.blocks[db].writable {
            return Err("copy into an immutable global".into());
        }
        let n = size as usize;
        let bytes = self.blocks[sb].bytes[so..so + n].to_vec();
        let init: Vec<bool> = (so..so + n)
            .map(|i| bit(&self.blocks[sb].init, i))
            .collect();
        let refs: Vec<(u64, Value)> = self.blocks[sb]
            .refs
            .range(so as u64..(so + n) as u64)
            .map(|(&o, v)| (o - so as u64 + d as u64, v.clone()))
            .collect();
        let block = &mut self.blocks[db];
        clear_refs(block, d, n);
        block.bytes[d..d + n].copy_from_slice(&bytes);
        for (i, &set) in init.iter().enumerate() {
            set_bit(&mut block.init, d + i, set);
        }
        block.refs.extend(refs);
        Ok(())
    }

    /// The bytes from `p` up to the first zero byte.
    pub(super) fn c_string(&self, p: &Pointer) -> Result<Vec<u8>, String> {
        let (b, off) = self.range(p, 0)?;
        let b = &self.blocks[b];
        let mut out = Vec::new();
        for i in off..b.bytes.len() {
            if !bit(&b.init, i) {
                return Err("string holds uninitialized bytes".into());
            }
            match b.bytes[i] {
                0 => return Ok(out),
                c => out.push(c),
            }
        }
        Err("string without a terminating zero byte".into())
    }
}

fn write(block: &mut Block, s: &Shape, off: usize, v: &Value) -> Result<(), String> {
    match (s, v) {
        (_, Value::Undef) => {
            let n = s.size() as usize;
            clear_refs(block, off, n);
            for i in off..off + n {
                set_bit(&mut block.init, i, false);
            }
        }
        (Shape::Bits(n), Value::Bits(bits)) => {
            let n = *n as usize;
            clear_refs(block, off, n);
            block.bytes[off..off + n].copy_from_slice(&bits.to_le_bytes()[..n]);
            for i in off..off + n {
                set_bit(&mut block.init, i, true);
            }
        }
        (Shape::Ref, Value::Ptr(_) | Value::Closure(_) | Value::Exit) => {
            clear_refs(block, off, 8);
            block.refs.insert(off as u64, v.clone());
            for i in off..off + 8 {
                set_bit(&mut block.init, i, true);
            }
        }
        (Shape::Agg(parts), Value::Agg(vs)) if parts.len() == vs.len() => {
            for ((o, s), v) in parts.iter().zip(vs.iter()) {
                write(block, s, off + *o as usize, v)?;
            }
        }
        (Shape::Array { n, stride, elem }, Value::Agg(vs)) if *n == vs.len() as u64 => {
            for (i, v) in vs.iter().enumerate() {
                write(block, elem, off + i * *stride as usize, v)?;
            }
        }
        (Shape::Empty, _) => {}
        _ => return Err("store of a value that does not fit the memory's type".into()),
    }
    Ok(())
}

/// Removes stored pointers that overlap `[off, off + n)`.
fn clear_refs(block: &mut Block, off: usize, n: usize) {
    if block.refs.is_empty() {
        return;
    }
    let lo = (off as u64).saturating_sub(7);
    let hit: Vec<u64> = block
        .refs
        .range(lo..(off + n) as u64)
        .map(|(&o, _)| o)
        .filter(|&o| o + 8 > off as u64)
        .collect();
    for o in hit {
        block.refs.remove(&o);
    }
}

fn bit(init: &[u64], i: usize) -> bool {
    init[i / 64] >> (i % 64) & 1 == 1
}

fn set_bit(init: &mut [u64], i: usize, set: bool) {
    if set {
        init[i / 64] |= 1 << (i % 64);
    } else {
        init[i / 64] &= !(1 << (i % 64));
    }
}

fn all_init(init: &[u64], off: usize, n: usize) -> bool {
    (off..off + n).all(|i| bit(init, i))
}

/// The message of an access of `size` bytes at `p` outside a block of `len` bytes: in
/// elements when `p` came from an array index.
fn out_of_bounds(p: &Pointer, size: u64, len: i64) -> String {
    if p.elem > 0 {
        let elem = p.elem as i64;
        let base = p.offset.wrapping_sub(p.index.wrapping_mul(elem));
        if (0..=len).contains(&base) {
            let n = (len - base) / elem;
            return format!("out-of-bounds access: index {} of {n} elements", p.index);
        }
    }
    format!(
        "out-of-bounds access: {size} bytes at byte offset {} of a block of {len} bytes",
        p.offset
    )
}
