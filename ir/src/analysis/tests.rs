//! Tests of the analyses on a program with two nested loops
//! (`tests/filetests/ir/nested_loops.dir` in the repository).

use super::cfg::{Cfg, DomTree};
use super::looptree::LoopTree;
use super::schedule::{Placement, Schedule};
use super::scope::Scope;
use crate::def::Def;
use crate::world::World;

const NESTED: &str = include_str!("../../../tests/filetests/ir/nested_loops.dir");

fn world() -> World {
    crate::text::parse(NESTED).expect("the test program parses")
}

fn by_name(w: &World, name: &str) -> Def {
    w.defs()
        .find(|&d| w.name(d) == Some(name))
        .unwrap_or_else(|| panic!("no def named {name}"))
}

fn names(w: &World, defs: impl IntoIterator<Item = Def>) -> Vec<String> {
    defs.into_iter()
        .map(|d| w.name(d).unwrap_or("?").to_string())
        .collect()
}

#[test]
fn scope_of_the_outer_loop() {
    let w = world();
    let scope = Scope::compute(&w, by_name(&w, "outer"));
    let mut conts = names(&w, scope.continuations().iter().copied());
    conts.sort();
    assert_eq!(
        conts,
        [
            "done",
            "inner",
            "inner_body",
            "inner_start",
            "outer",
            "outer_next"
        ]
    );
    let mut free = names(&w, scope.free_defs().iter().copied());
    free.sort();
    assert_eq!(free, ["n", "ret"]);
    assert!(scope.defs().contains(&by_name(&w, "ij")));
    assert!(!scope.contains(&w, by_name(&w, "main")));
}

#[test]
fn dominators() {
    let w = world();
    let scope = Scope::compute(&w, by_name(&w, "main"));
    let cfg = Cfg::compute(&w, &scope);
    assert_eq!(cfg.len(), 7);
    assert_eq!(cfg.reverse_post_order()[0], by_name(&w, "main"));
    let dom = DomTree::compute(&cfg);
    let idom = |k: &str| {
        dom.idom(&cfg, by_name(&w, k))
            .map(|d| w.name(d).unwrap_or("?").to_string())
    };
    assert_eq!(idom("main"), None);
    assert_eq!(idom("outer").as_deref(), Some("main"));
    assert_eq!(idom("done").as_deref(), Some("outer"));
    assert_eq!(idom("inner").as_deref(), Some("inner_start"));
    assert_eq!(idom("inner_body").as_deref(), Some("inner"));
    assert_eq!(idom("outer_next").as_deref(), Some("inner"));
    assert!(dom.dominates(&cfg, by_name(&w, "outer"), by_name(&w, "inner_body")));
    assert!(!dom.dominates(&cfg, by_name(&w, "inner_body"), by_name(&w, "outer_next")));
    let lca = dom.lca(&cfg, by_name(&w, "inner_body"), by_name(&w, "done"));
    assert_eq!(lca, Some(by_name(&w, "outer")));
}

#[test]
fn loop_nesting() {
    let w = world();
    let scope = Scope::compute(&w, by_name(&w, "main"));
    let cfg = Cfg::compute(&w, &scope);
    let loops = LoopTree::compute(&cfg, &DomTree::compute(&cfg));
    assert_eq!(loops.loops().len(), 2);
    let outer = &loops.loops()[0];
    let inner = &loops.loops()[1];
    assert_eq!(w.name(outer.header), Some("outer"));
    assert_eq!(w.name(inner.header), Some("inner"));
    let mut body = names(&w, inner.body.iter().copied());
    body.sort();
    assert_eq!(body, ["inner", "inner_body"]);
    assert_eq!(outer.body.len(), 5);
    assert_eq!(inner.parent, Some(0));
    assert_eq!((outer.depth, inner.depth), (1, 2));
    assert_eq!(loops.depth(by_name(&w, "inner_body")), 2);
    assert_eq!(loops.depth(by_name(&w, "done")), 0);
}

#[test]
fn early_and_late_placement() {
    let w = world();
    let scope = Scope::compute(&w, by_name(&w, "main"));
    let cfg = Cfg::compute(&w, &scope);
    let dom = DomTree::compute(&cfg);
    let early = Schedule::compute(&w, &scope, &cfg, &dom, Placement::Early);
    let late = Schedule::compute(&w, &scope, &cfg, &dom, Placement::Late);
    let at = |s: &Schedule, d: &str| {
        w.name(s.block_of(by_name(&w, d)).expect("placed"))
            .map(String::from)
    };
    assert_eq!(at(&early, "ij").as_deref(), Some("inner"));
    assert_eq!(at(&late, "ij").as_deref(), Some("inner_body"));
    assert_eq!(at(&early, "i1").as_deref(), Some("outer"));
    assert_eq!(at(&late, "i1").as_deref(), Some("outer_next"));
    assert_eq!(at(&late, "c").as_deref(), Some("outer"));
    // Operands come before their users within a block.
    let block = late.block(by_name(&w, "inner_body"));
    let pos = |n: &str| {
        block
            .iter()
            .position(|&d| d == by_name(&w, n))
            .expect("in block")
    };
    assert!(pos("ij") < pos("a1"));
}

/// Whether `program::collect` makes `names` functions of `src` and the rest blocks.
fn functions_of(src: &str) -> (Vec<String>, Vec<(String, Vec<String>)>) {
    let w = crate::text::parse(src).expect("the test program parses");
    let p = super::program::collect(&w);
    let mut blocks: Vec<(String, Vec<String>)> = p
        .blocks
        .iter()
        .map(|(&f, bs)| (names(&w, [f]).remove(0), names(&w, bs.iter().copied())))
        .collect();
    blocks.sort();
    (names(&w, p.functions.iter().copied()), blocks)
}

#[test]
fn a_closed_loop_is_a_block_of_the_function_that_enters_it() {
    let (functions, blocks) = functions_of(
        "extern cont @main(%m: mem, %r: cn(mem, i32)) {
            jump @head(%m)
        }
        cont @head(%n: mem) {
            jump @head(%n)
        }",
    );
    assert_eq!(functions, ["main"]);
    assert_eq!(blocks, [("main".to_string(), vec!["head".to_string()])]);
}

#[test]
fn a_loop_entered_from_two_functions_or_taking_a_continuation_stays_a_function() {
    let (functions, blocks) = functions_of(
        "extern cont @a(%m: mem, %r: cn(mem, i32)) {
            jump @head(%m)
        }
        extern cont @b(%m2: mem, %r2: cn(mem, i32)) {
            jump @head(%m2)
        }
        cont @head(%n: mem) {
            jump @head(%n)
        }
        extern cont @c(%m3: mem, %r3: cn(mem, i32)) {
            jump @count(%m3, 3:i32, %r3)
        }
        cont @count(%m4: mem, %i: i32, %k: cn(mem, i32)) {
            jump @count(%m4, %i, %k)
        }",
    );
    assert_eq!(functions, ["a", "b", "head", "c", "count"]);
    assert!(blocks.is_empty(), "{blocks:?}");
}
