//! Analyses: values computed from a [`World`](crate::World) that never change it.
//!
//! - [`free::FreeParams`]: the parameters each continuation uses from outside;
//! - [`scope::Scope`]: what a continuation's parameters reach;
//! - [`cfg::Cfg`] and [`cfg::DomTree`]: control flow between a scope's continuations;
//! - [`looptree::LoopTree`]: natural loops, nested;
//! - [`schedule::Schedule`]: placement of computed defs into continuations;
//! - [`program::Program`]: what a back end translates of a first-order program;
//! - [`uses::UseSets`]: the continuations and parameters each def reaches, memoized.

pub mod cfg;
pub mod free;
pub mod looptree;
pub mod program;
pub mod schedule;
pub mod scope;
pub mod uses;

#[cfg(test)]
mod tests;
