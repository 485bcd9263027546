//! Links the LLVM components durin uses, statically: the x86 target, the optimizer's
//! passes, the ORC JIT and what they need (`llvm-config --libs`). `llvm-sys` would link every
//! component and target LLVM was built with (and Polly), and their static constructors ran
//! at every start of a program that links this crate (docs/src/decisions.md).

use std::path::PathBuf;
use std::process::Command;

const COMPONENTS: &[&str] = &[
    "x86",
    "passes",
    "orcjit",
    "linker",
    "irreader",
    "bitreader",
    "bitwriter",
];

/// `llvm-config` of LLVM 19: under `LLVM_SYS_191_PREFIX` when that is set (as for
/// `llvm-sys`), else `llvm-config-19` or `llvm-config` on the `PATH`.
fn llvm_config() -> PathBuf {
    println!("cargo:rerun-if-env-changed=LLVM_SYS_191_PREFIX");
    if let Some(prefix) = std::env::var_os("LLVM_SYS_191_PREFIX") {
        return PathBuf::from(prefix).join("bin/llvm-config");
    }
    for name in ["llvm-config-19", "llvm-config"] {
        if Command::new(name)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            return PathBuf::from(name);
        }
    }
    panic!("no llvm-config of LLVM 19: install llvm-19-dev or set LLVM_SYS_191_PREFIX");
}

fn run(config: &PathBuf, args: &[&str]) -> String {
    let out = Command::new(config)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", config.display()));
    assert!(out.status.success(), "{} {args:?} failed", config.display());
    String::from_utf8(out.stdout).expect("llvm-config prints UTF-8")
}

fn main() {
    let config = llvm_config();
    let version = run(&config, &["--version"]);
    assert!(
        version.starts_with("19."),
        "durin needs LLVM 19, found {}",
        version.trim()
    );
    println!(
        "cargo:rustc-link-search=native={}",
        run(&config, &["--libdir"]).trim()
    );
    let mut args = vec!["--link-static", "--libs"];
    args.extend(COMPONENTS);
    for lib in run(&config, &args).split_whitespace() {
        let name = lib
            .strip_prefix("-l")
            .expect("llvm-config --libs prints -l flags");
        println!("cargo:rustc-link-lib=static={name}");
    }
    // The C++ library statically as well: resolving LLVM's 3,900 references into a shared
    // libstdc++ (vtables, type information) at every start was about half of what linking
    // by component and statically saves (docs/src/decisions.md).
    println!("cargo:rerun-if-env-changed=CXX");
    let out = Command::new(std::env::var("CXX").unwrap_or_else(|_| "c++".into()))
        .arg("-print-file-name=libstdc++.a")
        .output();
    match out
        .ok()
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
    {
        Some(path) if path.is_absolute() && path.exists() => {
            let dir = path.parent().expect("a file has a folder");
            println!("cargo:rustc-link-search=native={}", dir.display());
            println!("cargo:rustc-link-lib=static=stdc++");
        }
        _ => println!("cargo:rustc-link-lib=dylib=stdc++"),
    }
    for lib in ["rt", "dl", "m", "z", "zstd"] {
        println!("cargo:rustc-link-lib=dylib={lib}");
    }
}
