//! The fuzzer (`durin-fuzz`, `scripts/fuzz`) in the test suite: a short campaign from a fixed
//! seed, and every failure a campaign ever saved to `tests/fuzz/`, which must stay fixed.
//!
//! `FUZZ_INPUTS` sets the short campaign's length (default 300 inputs).

mod common;

use durin_fuzz::exec::Limits;
use durin_fuzz::oracle::{Input, Kind, Oracle};
use durin_fuzz::{ir_args, Campaign, Corpus};
use std::path::PathBuf;
use std::time::Duration;

fn oracle() -> Oracle {
    let exe = std::env::var_os("DURIN_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_durin")));
    Oracle {
        durin: std::fs::canonicalize(exe).expect("the durin executable exists"),
        // Generous: the build may be a debug one, on a machine that may be busy.
        limits: Limits {
            time: Duration::from_secs(120),
            memory: 8 << 30,
        },
        fuel: 20_000_000,
        jit: true,
    }
}

#[test]
fn short_fixed_seed_campaign_finds_nothing() {
    let root = common::root();
    let corpus = Corpus::load(&[root.join("tests"), root.join("examples")]);
    assert!(
        corpus.sources.len() > 100 && corpus.irs.len() > 10,
        "the corpus is there"
    );
    let inputs = match std::env::var("FUZZ_INPUTS") {
        Ok(v) => v.parse().expect("FUZZ_INPUTS is a number"),
        Err(_) => 300,
    };
    let campaign = Campaign {
        oracle: oracle(),
        seed: 20261124,
        inputs: Some(inputs),
        duration: None,
        jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
        save: None,
        minimize: false,
        progress: None,
        root: root.clone(),
    };
    let report = campaign.run(&corpus);
    eprintln!("fuzz: {}", report.summary());
    let found: Vec<String> = report
        .findings
        .iter()
        .map(|f| format!("{}\n    from: {}", f.failure, f.input.origin))
        .collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
    assert_eq!(report.inputs, inputs);
    // The inputs reach every stage: some are accepted, some run to the end.
    assert!(
        report.accepted > 0 && report.ran > 0,
        "{}",
        report.summary()
    );
}

#[test]
fn saved_failures_stay_fixed() {
    let files = common::files_in("tests/fuzz", &["art", "dir"]);
    let oracle = oracle();
    let scratch =
        std::env::temp_dir().join(format!("durin-fuzz-regressions-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("a scratch folder");
    let mut failed = Vec::new();
    for f in &files {
        let text = std::fs::read(f).expect("a readable file");
        let ir = f.extension().is_some_and(|e| e == "dir");
        // A generated image-library program (its `.txt` says where it came from) takes
        // the checks of one: also for a GPU, in the interpreter and on the CPU's cores.
        let from = std::fs::read_to_string(f.with_extension("txt")).unwrap_or_default();
        let input = Input {
            kind: if ir {
                Kind::Ir {
                    args: ir_args(&text),
                }
            } else if from.contains("from: generated: image program") {
                Kind::Image
            } else {
                Kind::Source
            },
            text,
            origin: f.display().to_string(),
        };
        let file = scratch.join(if ir { "input.dir" } else { "input.art" });
        if let Err(e) = oracle.check(&input, &file, &mut 0) {
            failed.push(format!("{}: {e}", f.display()));
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    eprintln!("{} saved failures checked", files.len());
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// The oracle on a stand-in for `durin` (a shell script) whose native runs print `native`,
/// steadily or followed by a number that changes from run to run: native output that
/// disagrees with the interpreter is a mismatch only when two native runs agree with each
/// other (blocks of CPU kernels run on several threads, so a racing or printing kernel has
/// no one output).
#[test]
fn native_output_that_changes_between_runs_is_no_mismatch() {
    use durin_fuzz::oracle::Class;
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("durin-fuzz-oracle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    let run = |vary: bool| {
        let script = dir.join(if vary { "varying" } else { "steady" });
        let text = format!(
            "#!/bin/sh\n\
             case \"$1 $3\" in\n\
             'check '*) exit 0 ;;\n\
             'run interp') echo interpreter; exit 0 ;;\n\
             *) n=$(cat count 2>/dev/null || echo 0); echo $((n + 1)) > count\n\
                echo native{}; exit 0 ;;\n\
             esac\n",
            if vary { " $n" } else { "" }
        );
        std::fs::write(&script, text).expect("the script is written");
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
            .expect("the script is executable");
        let mut oracle = oracle();
        oracle.durin = script;
        let input = Input {
            kind: Kind::Source,
            text: b"fn main() -> i32 { 0 }\n".to_vec(),
            origin: "a test".into(),
        };
        let mut runs = 0;
        let verdict = oracle.check(&input, &dir.join("input.art"), &mut runs);
        (verdict, runs)
    };
    let (steady, runs) = run(false);
    let failure = steady.expect_err("steady native output unlike the interpreter's");
    assert_eq!((failure.class, failure.step), (Class::Mismatch, "llvm"));
    assert_eq!(runs, 4, "check, interpreter, and the native run twice");
    let (varying, runs) = run(true);
    assert!(
        varying.is_ok(),
        "{:?}",
        varying.err().map(|e| e.to_string())
    );
    assert_eq!(runs, 4);
    let _ = std::fs::remove_dir_all(&dir);
}
