//! Running one command under a time limit and a memory limit.

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Limits for one command.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Wall-clock time; the command is killed after it.
    pub time: Duration,
    /// Address space in bytes (`RLIMIT_AS`): an allocation past it fails.
    pub memory: u64,
}

/// How a command ended.
#[derive(Clone, Debug)]
pub struct Ended {
    /// Its exit code, if it exited.
    pub code: Option<i32>,
    /// The signal that killed it, if one did (not counting our kill at the time limit).
    pub signal: Option<i32>,
    /// Whether it ran past the time limit (and was killed).
    pub timed_out: bool,
    /// Standard output (at most [`KEEP`] bytes).
    pub stdout: Vec<u8>,
    /// Standard error (at most [`KEEP`] bytes).
    pub stderr: Vec<u8>,
    /// How long it ran.
    pub time: Duration,
}

/// The most output kept of each stream; the rest is read and dropped.
pub const KEEP: usize = 1 << 20;

fn drain(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let (mut kept, mut buf) = (Vec::new(), [0u8; 8192]);
        while let Ok(n) = r.read(&mut buf) {
            if n == 0 {
                break;
            }
            let room = KEEP.saturating_sub(kept.len()).min(n);
            kept.extend_from_slice(&buf[..room]);
        }
        kept
    })
}

/// Runs `program args` in `dir` with standard input empty, under `limits`.
pub fn run(program: &Path, args: &[String], dir: &Path, limits: Limits) -> std::io::Result<Ended> {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let memory = limits.memory;
    // SAFETY: between fork and exec the closure only calls `setrlimit` and `setpgid`, which
    // are async-signal-safe, and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(move || {
            let as_limit = libc::rlimit {
                rlim_cur: memory,
                rlim_max: memory,
            };
            let no_core = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &as_limit) != 0
                || libc::setrlimit(libc::RLIMIT_CORE, &no_core) != 0
                || libc::setpgid(0, 0) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let start = Instant::now();
    let mut child = cmd.spawn()?;
    let out = drain(child.stdout.take().expect("piped stdout"));
    let err = drain(child.stderr.take().expect("piped stderr"));
    let mut timed_out = false;
    let mut pause = Duration::from_micros(200);
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        if start.elapsed() > limits.time {
            timed_out = true;
            // The whole process group: a program's own children too.
            // SAFETY: `kill` with a process group id the child made for itself.
            unsafe {
                libc::kill(-(child.id() as i32), libc::SIGKILL);
            }
            break child.wait()?;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    };
    let time = start.elapsed();
    Ok(Ended {
        code: status.code(),
        signal: if timed_out { None } else { status.signal() },
        timed_out,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        time,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, limits: Limits) -> Ended {
        let args = vec!["-c".to_string(), script.to_string()];
        run(Path::new("/bin/sh"), &args, Path::new("/"), limits).expect("sh runs")
    }

    const LIMITS: Limits = Limits {
        time: Duration::from_secs(5),
        memory: 1 << 30,
    };

    #[test]
    fn exit_codes_output_signals_and_time_limits() {
        let e = sh("echo out; echo err >&2; exit 3", LIMITS);
        assert_eq!((e.code, e.signal, e.timed_out), (Some(3), None, false));
        assert_eq!(
            (e.stdout.as_slice(), e.stderr.as_slice()),
            (&b"out\n"[..], &b"err\n"[..])
        );
        let e = sh("kill -SEGV $$", LIMITS);
        assert_eq!((e.code, e.signal), (None, Some(libc::SIGSEGV)));
        let short = Limits {
            time: Duration::from_millis(200),
            ..LIMITS
        };
        let e = sh("sleep 30", short);
        assert!(e.timed_out && e.signal.is_none());
        assert!(e.time < Duration::from_secs(5), "{:?}", e.time);
    }
}
