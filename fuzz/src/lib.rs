//! A fuzzer for the `durin` command.
//!
//! Each input is made from a seed and its number: a file of the test corpus (programs and
//! IR files) changed by token, line and byte mutations, or a generated stress program. The
//! [`oracle`] runs durin on it under time and memory limits; failures are minimized and
//! saved as regression files. Workers run inputs in parallel; a campaign with the same seed
//! makes the same inputs.

pub mod exec;
pub mod image;
pub mod minimize;
pub mod mutate;
pub mod oracle;
pub mod rng;
pub mod stress;

use oracle::{Class, Failure, Input, Kind, Oracle, Reached};
use rng::Rng;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The files mutations start from.
#[derive(Default)]
pub struct Corpus {
    /// Programs.
    pub sources: Vec<(PathBuf, Vec<u8>)>,
    /// IR files and the arguments they run with (their `; args: --run ...` line).
    pub irs: Vec<(PathBuf, Vec<u8>, Vec<String>)>,
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// The arguments of `durin ir` an IR test file runs with, from its `; args: ...` line
/// (`--run A B`, `--fuel N`, `--passes ...`; not `--dot`, which excludes running).
pub fn ir_args(text: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(text);
    text.lines()
        .take_while(|l| l.starts_with(';'))
        .find_map(|l| l.strip_prefix("; args:"))
        .map(|a| {
            a.split_whitespace()
                .filter(|w| *w != "--dot")
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

impl Corpus {
    /// Every `.art` and `.dir` file under `dirs`, in a fixed order.
    pub fn load(dirs: &[PathBuf]) -> Corpus {
        let mut files = Vec::new();
        for d in dirs {
            collect(d, &mut files);
        }
        files.sort();
        let mut c = Corpus::default();
        for f in files {
            let Ok(text) = std::fs::read(&f) else {
                continue;
            };
            match f.extension().and_then(|e| e.to_str()) {
                Some("art") => c.sources.push((f, text)),
                Some("dir") => {
                    let args = ir_args(&text);
                    c.irs.push((f, text, args));
                }
                _ => {}
            }
        }
        c
    }

    /// Input number `index` of the campaign with seed `seed`.
    pub fn input(&self, seed: u64, index: u64, root: &Path) -> Input {
        let mut rng = Rng::for_input(seed, index);
        let name = |p: &Path| p.strip_prefix(root).unwrap_or(p).display().to_string();
        let choice = rng.below(20);
        if choice >= 16 {
            let (what, text) = image::program(&mut rng);
            return Input {
                kind: Kind::Image,
                text: text.into_bytes(),
                origin: format!("generated: {what}"),
            };
        }
        if choice < 3 || (self.sources.is_empty() && self.irs.is_empty()) {
            let (what, text) = stress::program(&mut rng);
            return Input {
                kind: Kind::Source,
                text: text.into_bytes(),
                origin: format!("generated: {what}"),
            };
        }
        if choice < 6 && !self.irs.is_empty() || self.sources.is_empty() {
            let (path, text, args) = rng.pick(&self.irs);
            let donor = &rng.pick(&self.irs).1.clone();
            let mut text = text.clone();
            let steps = mutate::mutate(&mut rng, &mut text, donor);
            return Input {
                kind: Kind::Ir { args: args.clone() },
                text,
                origin: format!("{} mutated: {}", name(path), steps.join(", ")),
            };
        }
        let (path, text) = rng.pick(&self.sources);
        let donor = rng.pick(&self.sources).1.clone();
        let mut text = text.clone();
        let steps = mutate::mutate(&mut rng, &mut text, &donor);
        Input {
            kind: Kind::Source,
            text,
            origin: format!("{} mutated: {}", name(path), steps.join(", ")),
        }
    }
}

/// A campaign's settings.
pub struct Campaign {
    /// What to run and how.
    pub oracle: Oracle,
    /// The seed.
    pub seed: u64,
    /// Stop after this many inputs...
    pub inputs: Option<u64>,
    /// ...or after this long, whichever comes first.
    pub duration: Option<Duration>,
    /// Parallel workers.
    pub jobs: usize,
    /// Where to save minimized failures (none: not saved).
    pub save: Option<PathBuf>,
    /// Whether to minimize failures before saving them.
    pub minimize: bool,
    /// Print progress to standard error every this often (none: quiet).
    pub progress: Option<Duration>,
    /// The corpus's root, for short names in reports.
    pub root: PathBuf,
}

/// A failure found, with the input that shows it.
pub struct Finding {
    /// The input (minimized if asked).
    pub input: Input,
    /// The failure.
    pub failure: Failure,
    /// Where it was saved.
    pub saved: Option<PathBuf>,
}

/// What a campaign did.
#[derive(Default)]
pub struct Report {
    /// Inputs tried.
    pub inputs: u64,
    /// durin commands run (minimization included).
    pub runs: u64,
    /// Inputs durin accepted (checked or verified without an error).
    pub accepted: u64,
    /// Inputs that also ran to the end in the interpreter.
    pub ran: u64,
    /// Failures per class (every failing input, before deduplication).
    pub counts: BTreeMap<Class, u64>,
    /// One finding per distinct failure (class, step and message).
    pub findings: Vec<Finding>,
    /// Wall-clock time.
    pub time: Duration,
}

impl Report {
    /// The one-line summary: inputs, runs and the count of each class.
    pub fn summary(&self) -> String {
        let classes: Vec<String> = Class::ALL
            .iter()
            .map(|c| format!("{} {}", self.counts.get(c).copied().unwrap_or(0), c.name()))
            .collect();
        format!(
            "{} inputs ({} accepted, {} ran to the end), {} durin runs in {:.0?} ({:.1} inputs/s): {}",
            self.inputs,
            self.accepted,
            self.ran,
            self.runs,
            self.time,
            self.inputs as f64 / self.time.as_secs_f64().max(1e-9),
            classes.join(", ")
        )
    }
}

/// A short stable hash of bytes (FNV-1a), for file names.
pub fn hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

/// Saves a finding as `<class>-<step>-<hash>.<ext>` with a `.txt` beside it saying what
/// failed and where the input came from.
fn save(dir: &Path, input: &Input, failure: &Failure) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let mut text = Vec::new();
    if let Kind::Ir { args } = &input.kind {
        if !args.is_empty() {
            text.extend_from_slice(format!("; args: {}\n", args.join(" ")).as_bytes());
        }
    }
    text.extend_from_slice(&input.text);
    let stem = format!(
        "{}-{}-{:016x}",
        failure.class.name(),
        failure.step,
        hash(&text)
    );
    let path = dir.join(format!("{stem}.{}", input.kind.extension()));
    std::fs::write(&path, &text)?;
    std::fs::write(
        dir.join(format!("{stem}.txt")),
        format!("{failure}\nfrom: {}\n", input.origin),
    )?;
    Ok(path)
}

impl Campaign {
    /// Runs the campaign over `corpus`.
    pub fn run(&self, corpus: &Corpus) -> Report {
        let start = Instant::now();
        let next = AtomicU64::new(0);
        let runs = AtomicU64::new(0);
        let report = Mutex::new(Report::default());
        let last_progress = Mutex::new(Instant::now());
        std::thread::scope(|s| {
            for worker in 0..self.jobs.max(1) {
                let (next, runs, report, last_progress) = (&next, &runs, &report, &last_progress);
                s.spawn(move || {
                    let dir = std::env::temp_dir()
                        .join(format!("durin-fuzz-{}-{worker}", std::process::id()));
                    if std::fs::create_dir_all(&dir).is_err() {
                        return;
                    }
                    loop {
                        let index = next.fetch_add(1, Ordering::SeqCst);
                        if self.inputs.is_some_and(|n| index >= n)
                            || self.duration.is_some_and(|d| start.elapsed() >= d)
                        {
                            break;
                        }
                        let input = corpus.input(self.seed, index, &self.root);
                        let file = dir.join(format!("input.{}", input.kind.extension()));
                        let mut n = 0;
                        let result = self.oracle.check(&input, &file, &mut n);
                        runs.fetch_add(n, Ordering::SeqCst);
                        let reached = match result {
                            Ok(r) => Some(r),
                            Err(failure) => {
                                self.found(input, failure, &file, report, runs);
                                None
                            }
                        };
                        let mut r = report.lock().expect("report lock");
                        r.accepted += (reached >= Some(Reached::Accepted)) as u64;
                        r.ran += (reached == Some(Reached::Ran)) as u64;
                        r.inputs += 1;
                        r.runs = runs.load(Ordering::SeqCst);
                        r.time = start.elapsed();
                        if let Some(every) = self.progress {
                            let mut last = last_progress.lock().expect("progress lock");
                            if last.elapsed() >= every {
                                eprintln!("fuzz: {}", r.summary());
                                *last = Instant::now();
                            }
                        }
                    }
                    let _ = std::fs::remove_dir_all(&dir);
                });
            }
        });
        let mut r = report.into_inner().expect("report lock");
        r.runs = runs.load(Ordering::SeqCst);
        r.time = start.elapsed();
        r
    }

    fn found(
        &self,
        input: Input,
        failure: Failure,
        file: &Path,
        report: &Mutex<Report>,
        runs: &AtomicU64,
    ) {
        let key = |f: &Failure| (f.class, f.step, f.detail.clone());
        {
            let mut r = report.lock().expect("report lock");
            *r.counts.entry(failure.class).or_default() += 1;
            if r.findings.iter().any(|f| key(&f.failure) == key(&failure)) {
                return;
            }
        }
        if self.progress.is_some() {
            eprintln!("fuzz: found {failure}\n      from {}", input.origin);
        }
        let input = if self.minimize {
            // A hang costs the whole time limit per check: fewer of them.
            let checks = if failure.class == Class::Hang { 8 } else { 300 };
            let budget = minimize::Budget {
                checks,
                time: Duration::from_secs(300),
            };
            let (small, n) = minimize::minimize(&self.oracle, &input, &failure, file, &budget);
            runs.fetch_add(n, Ordering::SeqCst);
            small
        } else {
            input
        };
        let saved = self
            .save
            .as_ref()
            .and_then(|d| match save(d, &input, &failure) {
                Ok(p) => Some(p),
                Err(e) => {
                    eprintln!("fuzz: cannot save a finding in {}: {e}", d.display());
                    None
                }
            });
        report.lock().expect("report lock").findings.push(Finding {
            input,
            failure,
            saved,
        });
    }
}
