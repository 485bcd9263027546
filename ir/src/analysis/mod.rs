//! Analyses: values computed from a [`World`](crate::World) that never change it.

pub mod free;
