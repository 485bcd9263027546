//! The `durin` command line. It holds no compiler logic: each subcommand reads its input,
//! calls the library crates and reports their results and diagnostics.

use clap::{Parser, Subcommand};
use durin_ir::interp::{self, Limits};
use durin_ir::{text, verify, Def, World};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

#[derive(Parser)]
#[command(
    name = "durin",
    version,
    about = "A compiler for domain-specific libraries written as higher-order functional code",
    long_about = "durin compiles higher-order functional code into fast host and GPU code. \
                  This build provides the IR tools; the language frontend and the back ends \
                  are not implemented yet."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Read a textual IR file, verify it, and print it (or draw or run it).
    ///
    /// Without options, prints the program in the canonical text form. Exits with 1 on a
    /// parse error, a verifier error or a run-time error, after printing it.
    Ir {
        /// The IR file (`.dir`), or `-` for standard input.
        file: PathBuf,
        /// Write the def graph as Graphviz `dot` to standard output instead.
        #[arg(long, conflicts_with = "run")]
        dot: bool,
        /// Run the entry in the interpreter with these arguments (one per non-`mem`
        /// parameter before the final return continuation) and print each result on a line.
        #[arg(long, num_args = 0.., allow_negative_numbers = true, value_name = "ARG")]
        run: Option<Vec<String>>,
        /// The continuation to run (default: the only external continuation with a body).
        #[arg(long, value_name = "NAME")]
        entry: Option<String>,
        /// Maximum number of jumps the interpreter may make.
        #[arg(long, default_value_t = Limits::default().fuel)]
        fuel: u64,
        /// Print the time taken by each step to standard error.
        #[arg(long)]
        time: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Ir {
            file,
            dot,
            run,
            entry,
            fuel,
            time,
        } => ir_command(&file, dot, run, entry.as_deref(), fuel, time),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}

fn read_input(file: &Path) -> Result<String, String> {
    if file == Path::new("-") {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
            .map_err(|e| format!("error: cannot read standard input: {e}"))?;
        Ok(s)
    } else {
        std::fs::read_to_string(file)
            .map_err(|e| format!("error: cannot read `{}`: {e}", file.display()))
    }
}

fn ir_command(
    file: &Path,
    dot: bool,
    run: Option<Vec<String>>,
    entry: Option<&str>,
    fuel: u64,
    time: bool,
) -> Result<(), String> {
    let src = read_input(file)?;
    let step = |what: &str, t: Instant| {
        if time {
            eprintln!("{what:>8}: {:.3} ms", t.elapsed().as_secs_f64() * 1e3);
        }
    };
    let t = Instant::now();
    let world = text::parse(&src).map_err(|e| format!("{}:{e}", file.display()))?;
    step("parse", t);
    let t = Instant::now();
    if let Err(errors) = verify::verify(&world) {
        let mut msg = String::new();
        for e in &errors {
            msg.push_str(&format!("{}: error: {e}\n", file.display()));
        }
        msg.push_str(&format!("{} verifier error(s)", errors.len()));
        return Err(msg);
    }
    step("verify", t);
    if dot {
        print!("{}", durin_ir::dot::to_dot(&world));
        return Ok(());
    }
    let Some(args) = run else {
        let t = Instant::now();
        print!("{}", text::print(&world));
        step("print", t);
        return Ok(());
    };
    let entry = find_entry(&world, entry)?;
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
        return Err(format!(
            "error: the entry takes {} argument(s), {} given",
            value_tys.len(),
            args.len()
        ));
    }
    let mut values = Vec::new();
    for (i, (&t, a)) in value_tys.iter().zip(&args).enumerate() {
        let v = interp::parse_value(&world, t, a)
            .map_err(|e| format!("error: argument {}: {e}", i + 1))?;
        values.push(v);
    }
    let t = Instant::now();
    let limits = Limits {
        fuel,
        ..Limits::default()
    };
    let mut out = Vec::new();
    let result = interp::run_main(&world, entry, &values, limits, &mut out);
    // What the program printed comes first, even if it then failed.
    {
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(&out);
        let _ = stdout.flush();
    }
    let results = result.map_err(|e| format!("{}: error: {e}", file.display()))?;
    step("run", t);
    for (t, v) in results {
        println!("{}", interp::format_value(&world, t, &v));
    }
    Ok(())
}

fn find_entry(w: &World, name: Option<&str>) -> Result<Def, String> {
    let with_body: Vec<Def> = w.externals().filter(|&d| w.body(d).is_some()).collect();
    match name {
        Some(n) => {
            let n = n.trim_start_matches('@');
            w.continuations()
                .find(|&d| w.name(d) == Some(n))
                .ok_or_else(|| format!("error: no continuation named `@{n}`"))
        }
        None => match with_body.as_slice() {
            [one] => Ok(*one),
            [] => {
                Err("error: no external continuation with a body to run; mark one `extern`".into())
            }
            _ => Err("error: several external continuations; choose one with --entry".into()),
        },
    }
}
