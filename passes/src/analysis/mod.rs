//! Analyses the passes share: values computed from a world that never change it. A module
//! here imports nothing from the passes.

pub(crate) mod free;
pub(crate) mod live;
