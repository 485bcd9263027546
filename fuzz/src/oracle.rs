//! What the fuzzer runs on an input and what counts as a failure.
//!
//! A program (`.art`) is checked (`durin check`: exit 0 or 1); if it is accepted it runs in
//! the interpreter (any exit but the internal-error code); if the interpreter runs it to the
//! end, it runs natively through both JITs, which must give the same exit code and output,
//! or refuse the program with the documented limitation of native code (a closure that
//! jumps out of the code around it, left after partial evaluation), at its place, or stop
//! for want of a CUDA driver (the interpreter simulates the device's memory); native code
//! that disagrees with the interpreter runs again, and counts only if it agrees with
//! itself (kernels on the CPU accelerator run on several threads).
//! An IR file (`.dir`) is read (`durin ir`: exit 0 or 1); if it verifies it runs in the
//! interpreter, then again after the optimizing passes, which must not change its output.
//! Everywhere, a panic or internal compiler error, a signal, a run past the time limit or an
//! exit code outside those is a failure.

use crate::exec::{self, Ended, Limits};
use std::fmt;
use std::path::{Path, PathBuf};

/// What an input is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A program in the language.
    Source,
    /// A generated program of the image library ([`crate::image`]): run as a `Source`, and
    /// also with `--checks bounds`, in the interpreter for a GPU (`--target cuda`) and
    /// natively with its kernels on the CPU (`--target cuda-cpu`, with bounds checks),
    /// all of which must print what the interpreter prints.
    Image,
    /// An IR file, run with these options of `durin ir` (its `; args:` line).
    Ir {
        /// The options, `--run` and its arguments included.
        args: Vec<String>,
    },
}

impl Kind {
    /// The file extension.
    pub fn extension(&self) -> &'static str {
        match self {
            Kind::Source | Kind::Image => "art",
            Kind::Ir { .. } => "dir",
        }
    }
}

/// One input.
#[derive(Clone, Debug)]
pub struct Input {
    /// Program or IR.
    pub kind: Kind,
    /// The text (not necessarily UTF-8).
    pub text: Vec<u8>,
    /// Where it came from: the mutated file and the mutations, or the generated shape.
    pub origin: String,
}

/// The kinds of failure, in the order they are reported.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Class {
    /// A Rust panic or an internal compiler error (exit code 70).
    Panic,
    /// Killed by a signal (a stack overflow, an abort, a segmentation fault).
    Signal,
    /// Still running at the time limit.
    Hang,
    /// Native code and the interpreter disagree, or passes change a result.
    Mismatch,
    /// An exit code the step never gives.
    Unexpected,
}

impl Class {
    /// Every class.
    pub const ALL: [Class; 5] = [
        Class::Panic,
        Class::Signal,
        Class::Hang,
        Class::Mismatch,
        Class::Unexpected,
    ];

    /// Its name in reports and file names.
    pub fn name(self) -> &'static str {
        match self {
            Class::Panic => "panic",
            Class::Signal => "signal",
            Class::Hang => "hang",
            Class::Mismatch => "mismatch",
            Class::Unexpected => "unexpected-exit",
        }
    }
}

/// A failure: its class, the step that failed and what happened.
#[derive(Clone, Debug)]
pub struct Failure {
    /// The class.
    pub class: Class,
    /// The step: `check`, `interp`, `llvm`, `cranelift`, `ir`, `ir-run`, `ir-passes`.
    pub step: &'static str,
    /// The command's arguments (after `durin`).
    pub command: String,
    /// What went wrong, with the end of standard error.
    pub detail: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} in `durin {}`: {}",
            self.class.name(),
            self.command,
            self.detail
        )
    }
}

/// The settings of the checks.
#[derive(Clone, Debug)]
pub struct Oracle {
    /// The `durin` executable.
    pub durin: PathBuf,
    /// Limits of each command.
    pub limits: Limits,
    /// The interpreter's fuel (jumps).
    pub fuel: u64,
    /// Whether programs the interpreter runs to the end also run through the JITs.
    pub jit: bool,
}

/// Whether a native run stopped before running, with the one limitation native code
/// documents against the interpreter: a closure that jumps out of the code around it and
/// that partial evaluation did not remove (the message names its place and what to change).
fn native_limitation(e: &Ended) -> bool {
    let err = String::from_utf8_lossy(&e.stderr);
    e.code == Some(1)
        && e.stdout.is_empty()
        && err.contains("native code can leave a function only by returning")
        && err.contains("┌─")
}

/// Whether a native run stopped because the program uses a CUDA device (its memory, with
/// `--target cpu` too) and this machine has no CUDA driver; the interpreter simulates one.
fn needs_gpu(e: &Ended) -> bool {
    e.code == Some(101) && String::from_utf8_lossy(&e.stderr).contains("no CUDA driver found")
}

/// Whether an interpreted run stopped at the limit on jumps (the GPU's simulation of a
/// program takes more than its CPU version).
fn out_of_fuel(e: &Ended) -> bool {
    e.code == Some(101) && String::from_utf8_lossy(&e.stderr).contains("fuel exhausted")
}

/// The first line of the output that says what went wrong, else its last lines.
fn gist(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let key = text
        .lines()
        .find(|l| l.contains("panicked") || l.contains("internal compiler error"));
    let out = match key {
        Some(l) => l.to_string(),
        None => {
            let lines: Vec<&str> = text.lines().collect();
            lines[lines.len().saturating_sub(3)..].join(" | ")
        }
    };
    out.chars().take(400).collect()
}

fn signal_name(s: i32) -> String {
    match s {
        libc::SIGSEGV => "SIGSEGV".into(),
        libc::SIGABRT => "SIGABRT".into(),
        libc::SIGBUS => "SIGBUS".into(),
        libc::SIGILL => "SIGILL".into(),
        libc::SIGFPE => "SIGFPE".into(),
        libc::SIGKILL => "SIGKILL".into(),
        other => format!("signal {other}"),
    }
}

/// How far an input got.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Reached {
    /// durin rejected it (a diagnostic, exit 1).
    Rejected,
    /// durin accepted it, but it did not run to the end (a run-time error, out of fuel, or
    /// an IR file the interpreter cannot run with its arguments).
    Accepted,
    /// It ran to the end, and the other runs agreed.
    Ran,
}

/// A step's result: it ended (with an allowed exit code) or failed.
type Step = Result<Ended, Failure>;

impl Oracle {
    fn step(
        &self,
        step: &'static str,
        args: Vec<String>,
        dir: &Path,
        allowed: &dyn Fn(i32) -> bool,
        runs: &mut u64,
    ) -> Step {
        *runs += 1;
        let command = args.join(" ");
        let fail = |class, detail: String| Failure {
            class,
            step,
            command: command.clone(),
            detail,
        };
        let e = exec::run(&self.durin, &args, dir, self.limits)
            .map_err(|e| fail(Class::Unexpected, format!("cannot run durin: {e}")))?;
        if e.timed_out {
            return Err(fail(
                Class::Hang,
                format!("still running after {:.1?}", self.limits.time),
            ));
        }
        if let Some(s) = e.signal {
            return Err(fail(
                Class::Signal,
                format!("{}: {}", signal_name(s), gist(&e.stderr)),
            ));
        }
        let code = e.code.unwrap_or(-1);
        if code == 70 || String::from_utf8_lossy(&e.stderr).contains("panicked at") {
            return Err(fail(Class::Panic, gist(&e.stderr)));
        }
        if !allowed(code) {
            return Err(fail(
                Class::Unexpected,
                format!("exit code {code}: {}", gist(&e.stderr)),
            ));
        }
        Ok(e)
    }

    /// Runs the checks on `input`, written to `file` (in the folder the commands run in).
    /// Counts the commands run in `runs`.
    pub fn check(&self, input: &Input, file: &Path, runs: &mut u64) -> Result<Reached, Failure> {
        let dir = file.parent().unwrap_or(Path::new("."));
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        std::fs::write(file, &input.text).map_err(|e| Failure {
            class: Class::Unexpected,
            step: "write",
            command: String::new(),
            detail: format!("cannot write {}: {e}", file.display()),
        })?;
        let s = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let fuel = self.fuel.to_string();
        let any = |c: i32| c >= 0;
        let zero_or_one = |c: i32| c == 0 || c == 1;
        match &input.kind {
            Kind::Source | Kind::Image => {
                let checked = self.step("check", s(&["check", &name]), dir, &zero_or_one, runs)?;
                if checked.code != Some(0) {
                    return Ok(Reached::Rejected);
                }
                let interp = s(&[
                    "run",
                    "--backend",
                    "interp",
                    "--target",
                    "cpu",
                    "--fuel",
                    &fuel,
                    &name,
                ]);
                let want = self.step("interp", interp, dir, &any, runs)?;
                let code = want.code.unwrap_or(-1);
                // Compile errors (1 with a message), command-line errors (2) and run-time
                // errors (101) end the run before or during `main`: native code need not
                // agree with those.
                let ran_to_end =
                    !matches!(code, 2 | 101) && !(code == 1 && !want.stderr.is_empty());
                if !ran_to_end {
                    return Ok(Reached::Accepted);
                }
                if !self.jit {
                    return Ok(Reached::Ran);
                }
                // A native run: back end, level, target, with bounds checks or not.
                let native = |backend: &str, level: &str, target: &str, checks: bool| {
                    let mut a = s(&["run", "--backend", backend, "-O", level, "--target", target]);
                    if checks {
                        a.extend(s(&["--checks", "bounds"]));
                    }
                    a.push(name.clone());
                    a
                };
                let mut runs_of: Vec<(&'static str, Vec<String>)> = vec![
                    ("llvm", native("llvm", "2", "cpu", false)),
                    ("cranelift", native("cranelift", "0", "cpu", false)),
                ];
                if input.kind == Kind::Image {
                    let interp_cuda = ["run", "--backend", "interp", "--target", "cuda"];
                    runs_of.extend([
                        ("llvm-checks", native("llvm", "2", "cpu", true)),
                        (
                            "interp-cuda",
                            s(&[&interp_cuda[..], &["--fuel", &fuel, &name]].concat()),
                        ),
                        ("cuda-cpu", native("llvm", "2", "cuda-cpu", true)),
                        (
                            "cuda-cpu-cranelift",
                            native("cranelift", "0", "cuda-cpu", true),
                        ),
                    ]);
                }
                for (step, args) in runs_of {
                    let got = self.step(step, args.clone(), dir, &any, runs)?;
                    if native_limitation(&got) || needs_gpu(&got) || out_of_fuel(&got) {
                        return Ok(Reached::Accepted);
                    }
                    let differs = |e: &Ended| e.code != want.code || e.stdout != want.stdout;
                    // Kernels on the CPU accelerator run their blocks on several threads:
                    // a program whose threads race, or print, has no one output (as on a
                    // GPU). Native code that disagrees with itself is no mismatch.
                    if differs(&got) {
                        let again = self.step(step, args.clone(), dir, &any, runs)?;
                        if again.code != got.code || again.stdout != got.stdout {
                            return Ok(Reached::Accepted);
                        }
                        return Err(Failure {
                            class: Class::Mismatch,
                            step,
                            command: args.join(" "),
                            detail: format!(
                                "exit {:?} and {} bytes of output; the interpreter: exit {:?} and {} bytes{}",
                                got.code,
                                got.stdout.len(),
                                want.code,
                                want.stdout.len(),
                                if got.stderr.is_empty() { String::new() } else { format!(" ({})", gist(&got.stderr)) }
                            ),
                        });
                    }
                }
                Ok(Reached::Ran)
            }
            Kind::Ir { args } => {
                let read = self.step("ir", s(&["ir", &name]), dir, &zero_or_one, runs)?;
                if read.code != Some(0) {
                    return Ok(Reached::Rejected);
                }
                // The file's own options, with fuel unless it sets some, and `--run` last
                // unless it has one (its arguments follow it).
                let has = |flag: &str| args.iter().any(|a| a == flag);
                let mut run = s(&["ir", &name]);
                if !has("--fuel") {
                    run.extend(s(&["--fuel", &fuel]));
                }
                run.extend(args.iter().cloned());
                if !has("--run") {
                    run.push("--run".into());
                }
                let want = self.step("ir-run", run.clone(), dir, &zero_or_one, runs)?;
                if want.code != Some(0) {
                    return Ok(Reached::Accepted);
                }
                if has("--passes") {
                    return Ok(Reached::Ran);
                }
                run.splice(2..2, s(&["--passes", "simplify,pe,cleanup,mem2reg,dce"]));
                let got = self.step("ir-passes", run.clone(), dir, &zero_or_one, runs)?;
                if got.code == Some(0) && got.stdout != want.stdout {
                    return Err(Failure {
                        class: Class::Mismatch,
                        step: "ir-passes",
                        command: run.join(" "),
                        detail: format!(
                            "after the passes the results are {:?}, before {:?}",
                            String::from_utf8_lossy(&got.stdout).trim(),
                            String::from_utf8_lossy(&want.stdout).trim()
                        ),
                    });
                }
                Ok(Reached::Ran)
            }
        }
    }
}
