//! durin's intermediate representation: a continuation-passing graph in the style of Thorin.
//!
//! A program is a [`World`]: an arena of defs ([`Def`]) and types ([`Type`]). Values are
//! hash-consed and normalized as they are built; control flow is continuations that end in a
//! jump; effects are ordered by a `mem` token. Around the world sit the analyses
//! ([`analysis`]), the [`verify`]er, the text form ([`text`]), Graphviz output ([`dot`]) and a
//! reference [`interp`]reter. With the feature `proptest`, [`strategy`] generates random
//! well-typed programs.
//!
//! This crate knows no source language and no back end.

#![deny(missing_docs)]

pub mod analysis;
pub mod def;
pub mod dot;
pub mod equiv;
pub mod interp;
pub mod launch;
pub mod layout;
pub mod normalize;
pub mod semantics;
#[cfg(feature = "proptest")]
pub mod strategy;
pub mod text;
pub mod types;
pub mod typing;
pub mod verify;
pub mod world;

pub use def::{ArithOp, CmpOp, Def, Node};
pub use durin_diag::Span;
pub use launch::{Kernel, Launch};
pub use types::{AddrSpace, Type, TypeKind};
pub use world::{Expansion, Places, World};
