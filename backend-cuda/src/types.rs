//! IR types as CUDA C types.
//!
//! Integers use the fixed-width names that the module's preamble defines (`i32`, `u8`,
//! ...), floats are `float`, `double` and `__half`. `mem` has no C type. Tuples become
//! structs `tuple_N` whose fields are `e0`, `e1`, ... by IR index (a `mem` component has no
//! field, so indices stay those of the IR); structs keep their name and field names;
//! arrays of a known length are wrapped in a struct `array_N { T a[n]; }` so that they are
//! values. A pointer to an array of unknown length is a pointer to its element.

use crate::{internal, unsupported};
use durin_diag::Diagnostic;
use durin_ir::{Type, TypeKind, World};
use rustc_hash::FxHashMap;

/// The C types of a world's types, with the declarations they need.
#[derive(Default)]
pub struct CTypes {
    names: FxHashMap<Type, Option<String>>,
    /// Struct definitions, each after the ones it contains.
    pub decls: Vec<String>,
    /// Whether some type is `f16` (the module includes `cuda_fp16.h`).
    pub uses_half: bool,
    /// Result structs of device functions with several results, by their result types.
    results: FxHashMap<Vec<Type>, String>,
}

/// A valid C identifier made of `name`'s letters, digits and underscores.
pub fn ident(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    if C_KEYWORDS.contains(&s.as_str()) {
        s.push('_');
    }
    s
}

/// Words that a C or C++ identifier (or a macro of CUDA's headers) must not be.
const C_KEYWORDS: &[&str] = &[
    "auto",
    "bool",
    "break",
    "case",
    "char",
    "class",
    "const",
    "continue",
    "default",
    "delete",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "false",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "namespace",
    "new",
    "operator",
    "private",
    "public",
    "register",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "template",
    "this",
    "true",
    "typedef",
    "union",
    "unsigned",
    "using",
    "void",
    "volatile",
    "while",
    "i8",
    "i16",
    "i32",
    "i64",
    "u8",
    "u16",
    "u32",
    "u64",
    "min",
    "max",
    "half",
];

impl CTypes {
    /// The C type of values of `t`; `None` for `mem` (no data).
    pub fn get(&mut self, w: &World, t: Type) -> Result<Option<String>, Diagnostic> {
        if let Some(n) = self.names.get(&t) {
            return Ok(n.clone());
        }
        let n = match w.kind(t) {
            TypeKind::Mem => None,
            TypeKind::Bool => Some("bool".to_string()),
            TypeKind::Int { bits, signed } => {
                Some(format!("{}{bits}", if *signed { 'i' } else { 'u' }))
            }
            TypeKind::Float { bits: 16 } => {
                self.uses_half = true;
                Some("__half".to_string())
            }
            TypeKind::Float { bits: 32 } => Some("float".to_string()),
            TypeKind::Float { .. } => Some("double".to_string()),
            TypeKind::Ptr { pointee, .. } => {
                let pointee = *pointee;
                let target = match w.kind(pointee) {
                    TypeKind::Array { elem, len: None } => *elem,
                    _ => pointee,
                };
                let inner = self.get(w, target)?.unwrap_or_else(|| "void".to_string());
                Some(format!("{inner}*"))
            }
            TypeKind::Tuple(ts) => {
                let ts = ts.to_vec();
                let name = format!("tuple_{}", self.decls.len());
                let fields =
                    self.fields(w, ts.iter().enumerate().map(|(i, &t)| (format!("e{i}"), t)))?;
                self.decls.push(format!("struct {name} {{{fields} }};"));
                Some(name)
            }
            TypeKind::Struct(_) => {
                let decl = w
                    .types()
                    .struct_decl(t)
                    .ok_or_else(|| internal("a struct type without a declaration"))?;
                let name = ident(&decl.name);
                let fs: Vec<(String, Type)> = decl.fields.clone();
                // Set first: a struct may point to itself.
                self.names.insert(t, Some(name.clone()));
                let fields = self.fields(w, fs.into_iter().map(|(n, t)| (ident(&n), t)))?;
                self.decls.push(format!("struct {name} {{{fields} }};"));
                Some(name)
            }
            TypeKind::Array { elem, len: Some(n) } => {
                let (elem, n) = (*elem, *n);
                let e = self.value(w, elem)?;
                let name = format!("array_{}", self.decls.len());
                self.decls
                    .push(format!("struct {name} {{ {e} a[{}]; }};", n.max(1)));
                Some(name)
            }
            TypeKind::Array { len: None, .. } => {
                return Err(unsupported(
                    "an array of unknown length as a value (only behind a pointer)",
                ))
            }
            TypeKind::Cont(_) => {
                return Err(unsupported(
                    "a function used as a value in a kernel (kernels call functions directly)",
                ))
            }
        };
        self.names.insert(t, n.clone());
        Ok(n)
    }

    /// The C type of `t`, which must carry data.
    pub fn value(&mut self, w: &World, t: Type) -> Result<String, Diagnostic> {
        self.get(w, t)?
            .ok_or_else(|| internal("a `mem` token used as a value"))
    }

    fn fields(
        &mut self,
        w: &World,
        fields: impl Iterator<Item = (String, Type)>,
    ) -> Result<String, Diagnostic> {
        let mut s = String::new();
        for (name, t) in fields {
            if let Some(c) = self.get(w, t)? {
                s.push_str(&format!(" {c} {name};"));
            }
        }
        Ok(s)
    }

    /// The name of the field of IR index `i` of aggregate type `t`: `None` for a `mem` field.
    pub fn field(&mut self, w: &World, t: Type, i: usize) -> Result<Option<String>, Diagnostic> {
        match w.kind(t) {
            TypeKind::Tuple(ts) => {
                let c = ts.get(i).copied();
                match c {
                    Some(c) if w.types().is_mem(c) => Ok(None),
                    Some(_) => Ok(Some(format!("e{i}"))),
                    None => Err(internal("tuple index out of range")),
                }
            }
            TypeKind::Struct(_) => {
                let decl = w
                    .types()
                    .struct_decl(t)
                    .ok_or_else(|| internal("a struct type without a declaration"))?;
                match decl.fields.get(i) {
                    Some((_, ft)) if w.types().is_mem(*ft) => Ok(None),
                    Some((n, _)) => Ok(Some(ident(n))),
                    None => Err(internal("struct index out of range")),
                }
            }
            _ => Err(internal("a field of a non-aggregate")),
        }
    }

    /// The struct that a device function returning several values returns.
    pub fn results(&mut self, w: &World, ts: &[Type]) -> Result<String, Diagnostic> {
        if let Some(n) = self.results.get(ts) {
            return Ok(n.clone());
        }
        let name = format!("results_{}", self.decls.len());
        let fields = self.fields(w, ts.iter().enumerate().map(|(i, &t)| (format!("r{i}"), t)))?;
        self.decls.push(format!("struct {name} {{{fields} }};"));
        self.results.insert(ts.to_vec(), name.clone());
        Ok(name)
    }
}
