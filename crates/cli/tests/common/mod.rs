//! Running the `veil` binary from the tests.
#![allow(dead_code, clippy::expect_used, clippy::unwrap_used, reason = "test code")]

use std::process::{Command, Output};

pub fn veil(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_veil")).args(args).output().expect("veil runs")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `veil` started in the background, its output captured.
pub fn spawn_veil<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_veil"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}
