//! `durin ir`: a textual IR file read, verified, transformed, and printed, drawn or run.

use crate::session::{Failed, Session};
use durin_ir::interp;
use durin_ir::{text, verify, Def, World};
use durin_passes::{PassContext, Pipeline, RunOptions};
use std::path::Path;
use std::time::Instant;

/// What `durin ir` does with the file once it is read, verified and transformed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IrAction {
    /// Print it in the canonical text form.
    Print,
    /// Write the def graph as Graphviz `dot`.
    Dot,
    /// Run an entry in the interpreter with these arguments and print its results.
    Run {
        /// One argument per non-`mem` parameter before the return continuation.
        args: Vec<String>,
        /// The continuation to run (default: the only external one with a body).
        entry: Option<String>,
    },
}

impl Session<'_> {
    /// Reads the IR file `file` (`-`: standard input), verifies it, runs `passes` (verifying
    /// after each) and does `action`. Errors name the file.
    pub fn ir(
        &mut self,
        file: &Path,
        passes: Option<&str>,
        action: &IrAction,
    ) -> Result<(), Failed> {
        let name = file.display().to_string();
        let time = self.options().time;
        let fail = |s: &mut Self, message: String| {
            s.write_err(&message);
            Failed
        };
        if file.extension().is_some_and(|e| e == "art") {
            return Err(fail(
                self,
                format!("error: `{name}` is a source program, not IR text: check it with `durin check {name}`, run it with `durin run {name}` (`--print-ir` shows its IR)"),
            ));
        }
        let src = match crate::session::read_source(file) {
            Ok(s) => s,
            Err(d) => return Err(fail(self, format!("error: {d}"))),
        };
        let t = Instant::now();
        let (mut world, places) = text::parse_placed(&src, text::ParseOptions::default())
            .map_err(|e| fail(self, format!("{name}:{e}")))?;
        self.step("parse", t, time);
        let t = Instant::now();
        if let Err(errors) = verify::verify(&world) {
            let mut msg = String::new();
            for e in &errors {
                let line = match e.subject {
                    verify::Subject::Def(d) => places.def_line(d),
                    verify::Subject::Struct(t) => places.struct_line(t),
                };
                match line {
                    Some(line) => msg.push_str(&format!("{name}:{line}: error: {e}\n")),
                    None => msg.push_str(&format!("{name}: error: {e}\n")),
                }
            }
            msg.push_str(&format!("{} verifier error(s)", errors.len()));
            return Err(fail(self, msg));
        }
        self.step("verify", t, time);
        if let Some(list) = passes {
            let pipeline =
                Pipeline::parse(list).map_err(|e| fail(self, format!("error: --passes: {e}")))?;
            let opts = RunOptions {
                verify_each: true,
                ..RunOptions::default()
            };
            let t = Instant::now();
            let mut cx = PassContext::new(self.options().pass_config());
            pipeline
                .run_in(&mut world, &opts, &mut cx, |_, _| {})
                .map_err(|e| fail(self, format!("{name}: error: {e}")))?;
            self.step("passes", t, time);
        }
        match action {
            IrAction::Dot => self.write_out(durin_ir::dot::to_dot(&world).as_bytes()),
            IrAction::Print => {
                let t = Instant::now();
                self.write_out(text::print(&world).as_bytes());
                self.step("print", t, time);
            }
            IrAction::Run { args, entry } => {
                let entry = find_entry(&world, entry.as_deref())
                    .map_err(|e| fail(self, format!("error: {e}")))?;
                self.run_entry(&world, entry, args, &name)?;
            }
        }
        Ok(())
    }

    fn run_entry(
        &mut self,
        world: &World,
        entry: Def,
        args: &[String],
        name: &str,
    ) -> Result<(), Failed> {
        let ptys = world
            .types()
            .cont_params(world.type_of(entry))
            .unwrap_or(&[])
            .to_vec();
        let value_tys: Vec<_> = ptys
            .iter()
            .take(ptys.len().saturating_sub(1))
            .copied()
            .filter(|&t| !world.types().is_mem(t))
            .collect();
        if value_tys.len() != args.len() {
            self.write_err(&format!(
                "error: the entry takes {} argument(s), {} given",
                value_tys.len(),
                args.len()
            ));
            return Err(Failed);
        }
        let mut values = Vec::new();
        for (i, (&t, a)) in value_tys.iter().zip(args).enumerate() {
            match interp::parse_value(world, t, a) {
                Ok(v) => values.push(v),
                Err(e) => {
                    self.write_err(&format!("error: argument {}: {e}", i + 1));
                    return Err(Failed);
                }
            }
        }
        let t = Instant::now();
        let limits = self.options().interp;
        let mut out = Vec::new();
        let result = interp::run_main(world, entry, &values, limits, &mut out);
        // What the program printed comes first, even if it then failed.
        self.write_out(&out);
        let results = match result {
            Ok(r) => r,
            Err(e) => {
                self.write_err(&format!("{name}: error: {e}"));
                return Err(Failed);
            }
        };
        self.step("run", t, self.options().time);
        for (t, v) in results {
            let line = format!("{}\n", interp::format_value(world, t, &v));
            self.write_out(line.as_bytes());
        }
        Ok(())
    }

    fn step(&mut self, what: &str, t: Instant, time: bool) {
        if time {
            self.write_err(&format!(
                "{what:>8}: {:.3} ms",
                t.elapsed().as_secs_f64() * 1e3
            ));
        }
    }
}

fn find_entry(w: &World, name: Option<&str>) -> Result<Def, String> {
    let with_body: Vec<Def> = w.externals().filter(|&d| w.body(d).is_some()).collect();
    match name {
        Some(n) => {
            let n = n.trim_start_matches('@');
            w.continuations()
                .find(|&d| w.name(d) == Some(n))
                .ok_or_else(|| format!("no continuation named `@{n}`"))
        }
        None => match with_body.as_slice() {
            [one] => Ok(*one),
            [] => Err("no external continuation with a body to run; mark one `extern`".into()),
            _ => Err("several external continuations; choose one with --entry".into()),
        },
    }
}
