//! durin's IR passes, as transformations of a `durin-ir` world, and the pass manager that
//! runs them.
//!
//! A pipeline is data: a list of named passes ([`Pipeline::parse`] reads
//! `"pe,cleanup,dce"`), and the optimization levels `-O0`..`-O3` are pipelines
//! ([`Pipeline::for_level`]). [`Pipeline::run`] can verify the world after every pass, print it
//! after a pass, and time each pass. Passes keep the source locations that the front end
//! attached to continuations, so that errors found late (such as running out of
//! partial-evaluation fuel) point at source.
//!
//! It emits no target code.

#![deny(missing_docs)]

pub mod cff;
pub mod cleanup;
pub mod closure;
pub mod compact;
pub mod live;
pub mod mem2reg;
pub mod outline;
pub mod pe;
pub mod rewrite;

use durin_ir::{Loc, World};
use std::fmt;
use std::time::{Duration, Instant};

/// An error a pass reports: a message, where, and notes (each perhaps with a place).
#[derive(Clone, Debug, PartialEq)]
pub struct PassError {
    /// What went wrong.
    pub message: String,
    /// Where, when known.
    pub loc: Option<Loc>,
    /// More to say, each with its own place when there is one.
    pub notes: Vec<(String, Option<Loc>)>,
}

impl PassError {
    /// An error with `message` at `loc`.
    pub fn new(message: impl Into<String>, loc: Option<Loc>) -> PassError {
        PassError {
            message: message.into(),
            loc,
            notes: Vec::new(),
        }
    }

    /// Adds a note.
    pub fn with_note(mut self, note: impl Into<String>, loc: Option<Loc>) -> PassError {
        self.notes.push((note.into(), loc));
        self
    }
}

impl fmt::Display for PassError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        for (n, _) in &self.notes {
            write!(f, "\n  note: {n}")?;
        }
        Ok(())
    }
}

/// Settings passes read.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Partial-evaluation fuel: specializations allowed per run of `pe`.
    pub fuel: u64,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            fuel: pe::Options::default().fuel,
        }
    }
}

/// A transformation of a world.
pub trait Pass {
    /// The name pipelines use.
    fn name(&self) -> &'static str;
    /// Transforms `w`.
    fn run(&self, w: &mut World, config: &Config) -> Result<(), PassError>;
}

/// The built-in passes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Builtin {
    Pe,
    Inline,
    Simplify,
    Cleanup,
    Mem2reg,
    Dce,
    Outline,
    ClosureConv,
}

impl Builtin {
    /// The passes of optimization level `level` (0 to 3).
    fn level(level: u8) -> &'static [Builtin] {
        use Builtin::*;
        match level {
            0 => &[Cleanup, Dce],
            1 => &[Simplify, Mem2reg, Simplify, Dce],
            _ => &[Pe, Simplify, Mem2reg, Pe, Simplify, Dce],
        }
    }

    const ALL: [Builtin; 8] = [
        Builtin::Pe,
        Builtin::Inline,
        Builtin::Simplify,
        Builtin::Cleanup,
        Builtin::Mem2reg,
        Builtin::Dce,
        Builtin::Outline,
        Builtin::ClosureConv,
    ];

    fn name(self) -> &'static str {
        match self {
            Builtin::Pe => "pe",
            Builtin::Inline => "inline",
            Builtin::Simplify => "simplify",
            Builtin::Cleanup => "cleanup",
            Builtin::Mem2reg => "mem2reg",
            Builtin::Dce => "dce",
            Builtin::Outline => "outline",
            Builtin::ClosureConv => "closure-conv",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Builtin::Pe => "partial evaluation: specialize calls whose filter holds, inline continuations used once, and specialize local continuations on the continuations they are passed",
            Builtin::Inline => "inline continuations used once (no specialization)",
            Builtin::Simplify => "inline continuations used once and clean up, again until nothing changes",
            Builtin::Cleanup => "remove `run`/`hlt`/`known` markers, fold loads of constant tables, eta-reduce forwarding continuations, drop unused parameters and parameters always given the same constant",
            Builtin::Mem2reg => "promote stack slots whose address does not escape to values passed between continuations (SSA)",
            Builtin::Dce => "keep only what the external continuations reach",
            Builtin::Outline => "kernel outlining: the body of each GPU kernel launch becomes a closed top-level kernel taking the values it captures",
            Builtin::ClosureConv => "first-order form for native code: lift local functions that are only called to top level, and turn functions used as values into (code, environment) pairs",
        }
    }
}

/// Every built-in pass, by name, with what it does (for `--list-passes`).
pub fn passes() -> impl Iterator<Item = (&'static str, &'static str)> {
    Builtin::ALL
        .into_iter()
        .map(|b| (b.name(), b.description()))
}

impl Pass for Builtin {
    fn name(&self) -> &'static str {
        Builtin::name(*self)
    }

    fn run(&self, w: &mut World, config: &Config) -> Result<(), PassError> {
        let inline_only = pe::Options {
            specialize: false,
            cff: false,
            fuel: config.fuel,
            ..pe::Options::default()
        };
        match self {
            Builtin::Pe => {
                let opts = pe::Options {
                    fuel: config.fuel,
                    ..pe::Options::default()
                };
                pe::run(w, opts)?;
            }
            Builtin::Inline => {
                pe::run(w, inline_only)?;
            }
            Builtin::Simplify => {
                for _ in 0..32 {
                    let inlined = pe::run(w, inline_only)?.changed();
                    let cleaned = cleanup::run(w);
                    if !inlined && !cleaned {
                        break;
                    }
                }
            }
            Builtin::Cleanup => {
                cleanup::run(w);
            }
            Builtin::Mem2reg => {
                mem2reg::run(w);
            }
            Builtin::Dce => *w = compact::compact(w),
            Builtin::Outline => {
                outline::run(w)?;
            }
            Builtin::ClosureConv => *w = closure::run(w)?.0,
        }
        Ok(())
    }
}

/// A named list of passes.
pub struct Pipeline {
    passes: Vec<Box<dyn Pass>>,
}

/// Which passes to print the world after.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PrintAfter {
    /// After none.
    None,
    /// After every pass.
    All,
    /// After the passes of this name.
    Pass(String),
}

/// How to run a pipeline.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Verify the world after every pass (and before the first); a failure is an error
    /// naming the pass.
    pub verify_each: bool,
    /// Print the world (text form) after these passes, to the `print` sink.
    pub print_after: PrintAfter,
    /// Settings for the passes.
    pub config: Config,
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions {
            verify_each: false,
            print_after: PrintAfter::None,
            config: Config::default(),
        }
    }
}

/// The time one pass took and the size of the world after it.
#[derive(Clone, Debug)]
pub struct PassTime {
    /// The pass.
    pub name: &'static str,
    /// Wall time.
    pub time: Duration,
    /// Defs in the world after the pass.
    pub defs: usize,
}

impl Pipeline {
    /// The pipeline of optimization level `level` (0 to 3).
    pub fn for_level(level: u8) -> Pipeline {
        Pipeline::of(Builtin::level(level))
    }

    /// The pipeline that prepares a program for a native back end at level `level`: the
    /// level's passes (at least partial evaluation, which a `break` out of a `for` body
    /// needs to become a jump, as in Artic), then closure elimination.
    pub fn for_native(level: u8) -> Pipeline {
        use Builtin::*;
        let mut passes: Vec<Builtin> = match level {
            0 => vec![Pe, Cleanup, Dce],
            1 => vec![Pe, Simplify, Mem2reg, Simplify, Dce],
            l => Builtin::level(l).to_vec(),
        };
        passes.push(Outline);
        passes.push(ClosureConv);
        Pipeline::of(&passes)
    }

    /// Whether the last pass is closure elimination (what native back ends need).
    pub fn ends_first_order(&self) -> bool {
        self.passes
            .last()
            .is_some_and(|p| p.name() == Builtin::ClosureConv.name())
    }

    /// A pipeline from comma-separated pass names, such as `"pe,cleanup,dce"`; `O0`..`O3`
    /// stand for the passes of that level (`"O2,closure-conv"`).
    pub fn parse(text: &str) -> Result<Pipeline, String> {
        let mut passes = Vec::new();
        for n in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            if let Some(level) = ["O0", "O1", "O2", "O3"].iter().position(|&l| l == n) {
                passes.extend(Builtin::level(level as u8));
                continue;
            }
            match Builtin::ALL.into_iter().find(|b| b.name() == n) {
                Some(b) => passes.push(b),
                None => {
                    let all: Vec<&str> = Builtin::ALL.iter().map(|b| b.name()).collect();
                    return Err(format!(
                        "unknown pass `{n}` (passes: {}; levels: O0, O1, O2, O3)",
                        all.join(", ")
                    ));
                }
            }
        }
        Ok(Pipeline::of(&passes))
    }

    fn of(passes: &[Builtin]) -> Pipeline {
        Pipeline {
            passes: passes
                .iter()
                .map(|&b| Box::new(b) as Box<dyn Pass>)
                .collect(),
        }
    }

    /// Adds a pass before the last one (before closure elimination in a native pipeline).
    pub fn insert_before_last(&mut self, pass: Box<dyn Pass>) {
        let at = self.passes.len().saturating_sub(1);
        self.passes.insert(at, pass);
    }

    /// Adds a pass at the end.
    pub fn push(&mut self, pass: Box<dyn Pass>) {
        self.passes.push(pass);
    }

    /// The names of the passes, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.passes.iter().map(|p| p.name()).collect()
    }

    /// Runs the passes on `w` in order. `print` receives `(pass, text)` for each print that
    /// [`RunOptions::print_after`] asks for. Returns the time of each pass.
    pub fn run(
        &self,
        w: &mut World,
        opts: &RunOptions,
        mut print: impl FnMut(&str, &str),
    ) -> Result<Vec<PassTime>, PassError> {
        if opts.verify_each {
            verify(w, "the input")?;
        }
        let mut times = Vec::new();
        for p in &self.passes {
            let t = Instant::now();
            p.run(w, &opts.config)?;
            times.push(PassTime {
                name: p.name(),
                time: t.elapsed(),
                defs: w.num_defs(),
            });
            if opts.verify_each {
                verify(w, &format!("pass `{}`", p.name()))?;
            }
            let wanted = match &opts.print_after {
                PrintAfter::None => false,
                PrintAfter::All => true,
                PrintAfter::Pass(n) => n == p.name(),
            };
            if wanted {
                print(p.name(), &durin_ir::text::print(w));
            }
        }
        Ok(times)
    }
}

fn verify(w: &World, after: &str) -> Result<(), PassError> {
    durin_ir::verify::verify(w).map_err(|errors| {
        let mut e = PassError::new(
            format!("internal compiler error: the IR does not verify after {after}"),
            None,
        );
        for x in errors.iter().take(10) {
            e = e.with_note(x.to_string(), None);
        }
        e
    })
}
