//! `durin-fuzz`: runs a fuzzing campaign against a `durin` executable.

use durin_fuzz::exec::Limits;
use durin_fuzz::oracle::Oracle;
use durin_fuzz::{Campaign, Corpus};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

const HELP: &str = "\
durin-fuzz: mutated and generated programs and IR files against the durin command

Each input is a file of the corpus (programs `.art` and IR files `.dir`) changed by token,
line and byte mutations, a generated stress program (deep nesting, long chains, many
definitions, huge sizes), or a generated image-library program (operators over random
sizes, radii, boundary modes and views). durin checks it; a program it accepts runs in the
interpreter and, when the interpreter runs it to the end, through the LLVM and Cranelift
JITs, which must agree with the interpreter (an image-library program also with bounds
checks, in the interpreter for a GPU and with its kernels on the CPU: `--target cuda-cpu`); an IR file that verifies runs in the interpreter before
and after the optimizing passes, which must agree. A panic or internal compiler error, a
signal, a run past the time limit, or a disagreement is a failure: it is minimized and
saved. The same seed gives the same inputs. Exit status: 0 when nothing failed, 1 when
something did, 2 on a wrong command line.

Usage: durin-fuzz --durin PATH [OPTIONS]

Options:
  --durin PATH        the durin executable to test (required)
  --corpus DIR        a folder of `.art` and `.dir` files, searched recursively
                      (repeatable; default: tests and examples under the current folder)
  --seed N            the campaign's seed (default 1)
  --inputs N          stop after N inputs
  --minutes M         stop after M minutes (default: 10 when --inputs is not given)
  --jobs N            parallel workers (default: the number of CPUs)
  --save DIR          save minimized failures here (default: fuzz-findings)
  --no-minimize       save failing inputs as they are
  --no-jit            do not run programs natively
  --time-limit S      seconds each durin command may run (default 20)
  --memory-limit MB   address space of each durin command in MiB (default 8192)
  --fuel N            the interpreter's fuel in jumps (default 20000000)
  --quiet             no progress lines
  -h, --help          this text
";

fn value<T: std::str::FromStr>(
    args: &mut impl Iterator<Item = String>,
    flag: &str,
) -> Result<T, String> {
    let v = args.next().ok_or(format!("{flag} needs a value"))?;
    v.parse().map_err(|_| format!("{flag}: cannot read `{v}`"))
}

fn parse() -> Result<Option<(Campaign, Vec<PathBuf>)>, String> {
    let mut durin = None;
    let mut corpus = Vec::new();
    let (mut seed, mut inputs, mut minutes) = (1u64, None, None::<f64>);
    let mut jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut save = PathBuf::from("fuzz-findings");
    let (mut minimize, mut jit, mut quiet) = (true, true, false);
    let (mut time_limit, mut memory_mb, mut fuel) = (20.0f64, 8192u64, 20_000_000u64);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "-h" | "--help" => return Ok(None),
            "--durin" => durin = Some(PathBuf::from(value::<String>(&mut args, &a)?)),
            "--corpus" => corpus.push(PathBuf::from(value::<String>(&mut args, &a)?)),
            "--seed" => seed = value(&mut args, &a)?,
            "--inputs" => inputs = Some(value(&mut args, &a)?),
            "--minutes" => minutes = Some(value(&mut args, &a)?),
            "--jobs" => jobs = value(&mut args, &a)?,
            "--save" => save = PathBuf::from(value::<String>(&mut args, &a)?),
            "--no-minimize" => minimize = false,
            "--no-jit" => jit = false,
            "--time-limit" => time_limit = value(&mut args, &a)?,
            "--memory-limit" => memory_mb = value(&mut args, &a)?,
            "--fuel" => fuel = value(&mut args, &a)?,
            "--quiet" => quiet = true,
            other => return Err(format!("unknown argument `{other}` (see --help)")),
        }
    }
    let durin = durin.ok_or("--durin PATH is required (see --help)")?;
    // The commands run in a scratch folder: the path must not be relative.
    let durin = std::fs::canonicalize(&durin)
        .ok()
        .filter(|p| p.is_file())
        .ok_or(format!("{}: no such executable", durin.display()))?;
    if jobs == 0 || !(time_limit > 0.0) || minutes.is_some_and(|m| !(m > 0.0)) {
        return Err("--jobs, --time-limit and --minutes must be positive".into());
    }
    if corpus.is_empty() {
        corpus = vec![PathBuf::from("tests"), PathBuf::from("examples")];
    }
    let duration = match (inputs, minutes) {
        (None, None) => Some(Duration::from_secs(600)),
        (_, m) => m.map(|m| Duration::from_secs_f64(m * 60.0)),
    };
    let campaign = Campaign {
        oracle: Oracle {
            durin,
            limits: Limits {
                time: Duration::from_secs_f64(time_limit),
                memory: memory_mb.saturating_mul(1 << 20),
            },
            fuel,
            jit,
        },
        seed,
        inputs,
        duration,
        jobs,
        save: Some(save),
        minimize,
        progress: (!quiet).then_some(Duration::from_secs(10)),
        root: std::env::current_dir().unwrap_or_default(),
    };
    Ok(Some((campaign, corpus)))
}

fn main() -> ExitCode {
    let (campaign, dirs) = match parse() {
        Ok(Some(c)) => c,
        Ok(None) => {
            print!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("durin-fuzz: {e}");
            return ExitCode::from(2);
        }
    };
    let corpus = Corpus::load(&dirs);
    eprintln!(
        "fuzz: seed {}, {} programs and {} IR files in the corpus, {} workers",
        campaign.seed,
        corpus.sources.len(),
        corpus.irs.len(),
        campaign.jobs
    );
    let report = campaign.run(&corpus);
    println!("{}", report.summary());
    for f in &report.findings {
        println!("{}", f.failure);
        println!("    from: {}", f.input.origin);
        if let Some(p) = &f.saved {
            println!("    saved: {}", p.display());
        }
    }
    if report.findings.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
