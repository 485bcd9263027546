//! Properties of the passes over random programs: every pass and every pipeline keeps the
//! interpreter's results and the IR verifying, and a pipeline run twice changes nothing the
//! second time.
//!
//! Each property runs `PROPTEST_CASES` cases (1,000 by default).

use durin_ir::equiv::alpha_equivalent;
use durin_ir::strategy::{recipe, Recipe};
use durin_ir::{text, verify, Def, Node, World};
use durin_passes::{passes, Config, Diagnostic, PassContext, Pipeline, RunOptions};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    durin_ir::strategy::test_config()
}

fn entry(w: &World) -> Def {
    w.externals().next().expect("the program has its entry")
}

/// Runs `p` on `w` (verifying after every pass) with `fuel`; returns what `entry` of the
/// input is after the passes, followed through those that rebuild the world.
fn run(p: &Pipeline, w: &mut World, entry: Def, fuel: u64) -> Result<Def, Diagnostic> {
    let opts = RunOptions {
        verify_each: true,
        ..RunOptions::default()
    };
    let mut cx = PassContext::new(Config {
        fuel,
        ..Config::default()
    });
    p.run_in(w, &opts, &mut cx, |_, _| {})?;
    Ok(cx.follow(entry).expect("passes keep the externals"))
}

/// Runs `pipeline` on a copy of `w` and checks that the results stay the same.
fn preserves(
    w: &World,
    pipeline: &Pipeline,
    a: i32,
    b: i32,
    x: f64,
) -> Result<World, TestCaseError> {
    let before = Recipe::run(w, entry(w), a, b, x);
    prop_assert!(before.is_ok(), "generated programs run: {:?}", before);
    let mut after = w.clone();
    let moved = match run(pipeline, &mut after, entry(w), 10_000) {
        Ok(m) => m,
        Err(e) => return Err(TestCaseError::fail(format!("{e}\n{}", text::print(w)))),
    };
    let got = Recipe::run(&after, moved, a, b, x);
    prop_assert_eq!(
        &before,
        &got,
        "{:?} changed the results of\n{}\ninto\n{}",
        pipeline.names(),
        text::print(w),
        text::print(&after)
    );
    Ok(after)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn every_pass_preserves_results(r in recipe(), a in any::<i32>(), b in any::<i32>(), x in -1e4f64..1e4) {
        let (w, _) = r.build();
        for (name, _) in passes() {
            preserves(&w, &Pipeline::parse(name).expect("a pass"), a, b, x)?;
        }
    }

    #[test]
    fn every_level_preserves_results(r in recipe(), a in any::<i32>(), b in any::<i32>(), x in -1e4f64..1e4) {
        let (w, _) = r.build();
        for level in 0..=3 {
            preserves(&w, &Pipeline::for_level(level), a, b, x)?;
        }
    }

    #[test]
    fn pipelines_reach_a_fixed_point(r in recipe()) {
        let (w, _) = r.build();
        for level in 0..=3 {
            let p = Pipeline::for_level(level);
            let mut once = w.clone();
            run(&p, &mut once, entry(&w), 10_000).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let mut twice = once.clone();
            run(&p, &mut twice, entry(&once), 10_000).map_err(|e| TestCaseError::fail(e.to_string()))?;
            if let Err(e) = alpha_equivalent(&once, &twice) {
                return Err(TestCaseError::fail(format!(
                    "-O{level} changed its own output: {e}\n--- once\n{}--- twice\n{}",
                    text::print(&once),
                    text::print(&twice)
                )));
            }
        }
    }

    /// Filters set at random make the partial evaluator specialize (and often unroll) the
    /// random programs: the results stay the same, or the fuel runs out with an error.
    #[test]
    fn specialization_preserves_results(
        r in recipe(), picks in proptest::collection::vec(any::<bool>(), 16),
        a in any::<i32>(), b in any::<i32>(), x in -1e4f64..1e4,
    ) {
        let (mut w, _) = r.build();
        let conts: Vec<Def> = w.continuations().filter(|&k| !w.is_external(k)).collect();
        for (i, &k) in conts.iter().enumerate() {
            if picks[i % picks.len()] && w.node(k) == Node::Cont {
                let t = w.lit_bool(true);
                for p in 0..w.num_params(k) {
                    w.set_filter(k, p, t);
                }
            }
        }
        let before = Recipe::run(&w, entry(&w), a, b, x);
        prop_assert!(before.is_ok());
        let mut after = w.clone();
        match run(&Pipeline::for_level(3), &mut after, entry(&w), 300) {
            Ok(moved) => {
                prop_assert!(verify::verify(&after).is_ok());
                let got = Recipe::run(&after, moved, a, b, x);
                prop_assert_eq!(&before, &got, "\n{}\ninto\n{}", text::print(&w), text::print(&after));
            }
            Err(e) => prop_assert!(e.message.contains("partial evaluation ran out of"), "{}", e),
        }
    }
}

proptest! {
    #![proptest_config(config())]

    /// `mem2reg` promotes every slot it can in one run: a second run finds none, and after
    /// the first, a slot stays only where a closure (a continuation with free parameters)
    /// is passed to a call: the random programs make no other kind of escaping address.
    #[test]
    fn mem2reg_promotes_all_it_can_at_once(r in recipe()) {
        let (mut w, main) = r.build();
        let p = Pipeline::parse("mem2reg").expect("a pass");
        run(&p, &mut w, main, 10_000).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let mut again = w.clone();
        run(&p, &mut again, main, 10_000).map_err(|e| TestCaseError::fail(e.to_string()))?;
        if let Err(e) = alpha_equivalent(&w, &again) {
            return Err(TestCaseError::fail(format!("a second mem2reg changed the program: {e}\n{}", text::print(&w))));
        }
        if !r.stmts.iter().any(passes_closure) {
            let dce = Pipeline::parse("dce").expect("a pass");
            run(&dce, &mut again, main, 10_000).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let slots = again.defs().filter(|&d| again.node(d) == Node::Slot).count();
            prop_assert_eq!(slots, 0, "slots left\n{}", text::print(&again));
        }
    }
}

/// Whether a statement (or one nested in it) passes a closure to a call.
fn passes_closure(s: &durin_ir::strategy::Stmt) -> bool {
    use durin_ir::strategy::Stmt;
    match s {
        Stmt::SlotClosure(..) | Stmt::Closure(..) => true,
        Stmt::If(_, a, b) => a.iter().chain(b).any(passes_closure),
        Stmt::Loop(_, b) | Stmt::Call(_, b) | Stmt::Apply(_, b) => b.iter().any(passes_closure),
        _ => false,
    }
}

proptest! {
    #![proptest_config(config())]

    /// Closure elimination after any level keeps the results and leaves a first-order
    /// program: every continuation is a top-level function or a block. It converts
    /// closures with their environments only where the program passes one; wrappers for
    /// functions passed as values make no environment.
    #[test]
    fn closure_elimination_leaves_first_order_code(
        r in recipe(), level in 0u8..=3, a in any::<i32>(), b in any::<i32>(), x in -1e4f64..1e4,
    ) {
        let (w, _) = r.build();
        let pipeline = Pipeline::parse(&format!("O{level},closure-conv")).expect("a pipeline");
        let after = preserves(&w, &pipeline, a, b, x)?;
        let report = durin_passes::closure_report(&after);
        prop_assert!(
            report.is_first_order(),
            "closures left: {:?}\n{}",
            report.closures,
            text::print(&after)
        );
        let mut before = w.clone();
        run(&Pipeline::for_level(level), &mut before, entry(&w), 10_000).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let (_, _, stats) = durin_passes::eliminate_closures(&before).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(
            stats.converted + stats.lifted,
            durin_passes::closure_report(&before).closures.len(),
            "every closure the level leaves is converted or lifted\n{}",
            text::print(&before)
        );
        if !r.stmts.iter().any(passes_closure) {
            prop_assert_eq!(stats.converted, 0);
        }
    }
}

/// Runs `O2,closure-conv,split` on a copy of `w` with `split` splitting every function's
/// loops; returns the result and the entry's new def.
fn split_everything(w: &World) -> Result<(World, Def), Diagnostic> {
    let mut after = w.clone();
    let opts = RunOptions {
        verify_each: true,
        ..RunOptions::default()
    };
    let mut cx = PassContext::new(Config {
        fuel: 10_000,
        split_min_blocks: 0,
        ..Config::default()
    });
    let p = Pipeline::parse("O2,closure-conv,split").expect("a pipeline");
    p.run_in(&mut after, &opts, &mut cx, |_, _| {})?;
    let moved = cx.follow(entry(w)).expect("passes keep the externals");
    Ok((after, moved))
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn splitting_functions_preserves_results(r in recipe(), a in any::<i32>(), b in any::<i32>(), x in -1e4f64..1e4) {
        let (w, _) = r.build();
        let before = Recipe::run(&w, entry(&w), a, b, x);
        prop_assert!(before.is_ok(), "generated programs run: {:?}", before);
        let (after, moved) = split_everything(&w)
            .map_err(|e| TestCaseError::fail(format!("{e}\n{}", text::print(&w))))?;
        let got = Recipe::run(&after, moved, a, b, x);
        prop_assert_eq!(&before, &got, "splitting changed the results of\n{}\ninto\n{}", text::print(&w), text::print(&after));
    }
}

/// Two loops in a row, the second leaving to the function's return point: both become
/// functions marked `noinline`, the jumps into them calls, and the results stay. (Were the
/// second loop to use the first one's `%s` directly, the first would stay.)
#[test]
fn split_makes_each_loop_a_function() {
    let src = "
extern cont @main(%m: mem, %a: i32, %b: i32, %x: f64, %r: cn(mem, i32, f64)) {
    jump @head(%m, 0:i32, 0:i32)
}
cont @head(%m1: mem, %i: i32, %s: i32) {
    %c: bool = lt(%i, %a)
    %k: cn(mem, i32) = select(%c, @body, @after)
    jump %k(%m1, %s)
}
cont @body(%m2: mem, %s1: i32) {
    %s2: i32 = add(%s1, %i)
    %i2: i32 = add(%i, 1:i32)
    jump @head(%m2, %i2, %s2)
}
cont @after(%m3: mem, %t: i32) {
    jump @head2(%m3, 0:i32, %x)
}
cont @head2(%m4: mem, %j: i32, %y: f64) {
    %c2: bool = lt(%j, %b)
    %k2: cn(mem, i32, f64) = select(%c2, @body2, %r)
    jump %k2(%m4, %t, %y)
}
cont @body2(%m5: mem, %u: i32, %y2: f64) {
    %y3: f64 = mul(%y, 2.0:f64)
    %j2: i32 = add(%j, 1:i32)
    jump @head2(%m5, %j2, %y3)
}
";
    let w = text::parse(src).expect("the program parses");
    let (after, moved) = split_everything(&w).expect("the pipeline runs");
    let printed = text::print(&after);
    assert_eq!(printed.matches("noinline cont").count(), 2, "{printed}");
    for (a, b, x) in [(0, 0, 1.5), (10, 3, -2.0), (7, 0, 0.25)] {
        assert_eq!(
            Recipe::run(&w, entry(&w), a, b, x).expect("the input runs"),
            Recipe::run(&after, moved, a, b, x).expect("the split program runs"),
            "{printed}"
        );
    }
    // The text form keeps the mark.
    let again = text::parse(&printed).expect("the printed world parses");
    assert_eq!(text::print(&again).matches("noinline cont").count(), 2);
}
