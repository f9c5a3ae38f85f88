//! The `veil` binary, run as a user would.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::{spawn_veil, stderr, veil};

/// A five-party deployment in `dir` running `job` (the lines of its `[job]` table), whose
/// parties wait up to `recv_timeout_s` for a message.
fn model_job_config(dir: &Path, job: &str, recv_timeout_s: u64) -> std::path::PathBuf {
    model_job_config_of(dir, 5, job, recv_timeout_s)
}

/// [`model_job_config`] with `parties` parties.
fn model_job_config_of(dir: &Path, parties: usize, job: &str, recv_timeout_s: u64) -> std::path::PathBuf {
    let cfg = write_config(dir, parties, |i| i, "00112233445566778899aabbccddeeff");
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("[job]\nkind = \"demo-mul\"\nlength = 2\noutput = 0\n", &format!("[job]\n{job}"))
        .replace("recv_timeout_s = 5", &format!("recv_timeout_s = {recv_timeout_s}"));
    std::fs::write(&cfg, text).unwrap();
    cfg
}

#[test]
fn version_and_help() {
    let o = veil(&["version"]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("veil "));
    let h = veil(&["--help"]);
    let text = String::from_utf8_lossy(&h.stdout);
    for cmd in ["certs", "party", "demo", "version"] {
        assert!(text.contains(cmd), "help lacks {cmd}");
    }
}

#[test]
fn certs_writes_a_deployment() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c");
    let o = veil(&["certs", "--parties", "3", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    for f in ["ca.pem", "party-0.pem", "party-0.key", "party-2.pem", "party-2.key"] {
        assert!(out.join(f).exists(), "{f} missing");
    }
    assert!(!out.join("ca.key").exists(), "the CA key must not be written");
    let bad = veil(&["certs", "--parties", "1", "--out", out.to_str().unwrap()]);
    assert!(!bad.status.success());
    assert!(stderr(&bad).contains("at least 2 parties"));
}

#[test]
fn demo_embeds_a_sentence_privately_with_five_processes() {
    let o = veil(&["demo", "--security", "semi-honest", "--text", "Hello.", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(r["cosine_vs_plaintext"].as_f64().unwrap() > 0.99, "{r}");
    assert_eq!(r["tokens"], 4);
    assert_eq!(r["output"].as_array().unwrap().len(), 384);
    let parties = r["per_party"].as_array().unwrap();
    assert_eq!(parties.len(), 5);
    for p in parties {
        assert_eq!(p["output"].is_null(), p["party"] != 3, "only the data owner gets the output");
        assert!(p["peak_rss_mib"].as_f64().unwrap() > 0.0);
    }
    let server_offline = &parties[0]["phases"][0];
    assert_eq!(server_offline["phase"], "offline");
    assert!(server_offline["bytes_sent"].as_u64().unwrap() > 0);
}

#[test]
fn mm_runs_the_client_and_the_server_as_two_processes_and_the_digits_as_threads() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let gpt2 = root.join("crates/nn/tests/data/tiny-gpt2");
    let o = veil(&[
        "demo",
        "--family",
        "mm",
        "--model",
        gpt2.to_str().unwrap(),
        "--text",
        "Hello there.",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(r["cosine_vs_plaintext"].as_f64().unwrap() > 0.999, "{r}");
    let parties = r["per_party"].as_array().unwrap();
    assert_eq!(parties.len(), 2, "the client and the server");
    assert_eq!((parties[0]["output"].is_null(), parties[1]["output"].is_null()), (false, true));
    let onnx = root.join("models/digits-cnn/model.onnx");
    let o = veil(&["run", "--model", onnx.to_str().unwrap(), "--family", "mm", "--batch", "3", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["predictions"], r["plaintext_predictions"], "{r}");
    // The whole test set: private accuracy within a point of the float model's.
    let o = veil(&["eval", "--model", onnx.to_str().unwrap(), "--family", "mm", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let last = String::from_utf8_lossy(&o.stdout).lines().last().unwrap().to_string();
    let s: serde_json::Value = serde_json::from_str(&last).unwrap();
    assert_eq!(s["images"], 360, "{s}");
    let (private, float) = (s["private_accuracy"].as_f64().unwrap(), s["float_accuracy"].as_f64().unwrap());
    assert!((private - float).abs() <= 0.01 && s["agreement"].as_f64().unwrap() >= 0.99, "{s}");
    // mm offers its material on demand only, and is semi-honest.
    let o = veil(&["demo", "--family", "mm", "--offline", "ahead", "--model", gpt2.to_str().unwrap()]);
    assert!(stderr(&o).contains("ahead material is not an option"), "{}", stderr(&o));
    let o = veil(&["demo", "--family", "mm", "--security", "malicious"]);
    assert!(stderr(&o).contains("mm runs only with --security semi-honest"), "{}", stderr(&o));
}

#[test]
fn embed_party_errors_are_clear() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(dir.path(), 5, |i| i, "00112233445566778899aabbccddeeff");
    let text = std::fs::read_to_string(&cfg).unwrap();
    let embed = text.replace(
        "[job]\nkind = \"demo-mul\"\nlength = 2\noutput = 0\n",
        "[job]\nkind = \"embed\"\nfamily = \"mosformer\"\nsecurity = \"malicious\"\n",
    );
    std::fs::write(&cfg, &embed).unwrap();
    let c = cfg.to_str().unwrap();
    let o = veil(&["party", "--config", c, "--id", "3"]);
    assert!(stderr(&o).contains("pass its input with --text"), "{}", stderr(&o));
    let o = veil(&["party", "--config", c, "--id", "0", "--text", "hi"]);
    assert!(stderr(&o).contains("has no text input"), "{}", stderr(&o));
    let o = veil(&["party", "--config", c, "--id", "0", "--input", "x.json"]);
    assert!(stderr(&o).contains("not --input"), "{}", stderr(&o));
    let o = veil(&["party", "--config", c, "--id", "0", "--model", "/nonexistent"]);
    assert!(stderr(&o).contains("not a model folder"), "{}", stderr(&o));
    std::fs::write(&cfg, embed.replace("malicious", "paranoid")).unwrap();
    let o = veil(&["party", "--config", c, "--id", "0"]);
    assert!(stderr(&o).contains("--security must be"), "{}", stderr(&o));
    std::fs::write(
        &cfg,
        text.replace(
            "demo-mul\"\nlength = 2\noutput = 0",
            "embed\"\nfamily = \"aegis\"\nsecurity = \"malicious\"",
        ),
    )
    .unwrap();
    let o = veil(&["party", "--config", c, "--id", "0"]);
    assert!(stderr(&o).contains("cannot run models yet"), "{}", stderr(&o));
}

#[test]
fn demo_mul_runs_three_processes_over_tls_and_reports_costs() {
    let o = veil(&["demo", "--job", "mul", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(r["max_abs_error"].as_f64().unwrap() < 1e-3);
    let per_party = r["per_party"].as_array().unwrap();
    assert_eq!(per_party.len(), 3);
    // Online: every party sends d and e for 6 elements to 2 peers (192 bytes), and parties 1
    // and 2 send their 48-byte share of the product to party 0.
    for (i, p) in per_party.iter().enumerate() {
        let online = &p["phases"][1];
        assert_eq!(online["phase"], "online");
        let expected = if i == 0 { 192 } else { 240 };
        assert_eq!(online["bytes_sent"].as_u64().unwrap(), expected, "party {i}");
        assert_eq!(online["rounds"].as_u64().unwrap(), 2);
        assert_eq!(p["output"].is_null(), i != 0);
    }
}

fn write_config(
    dir: &Path,
    parties: usize,
    cert_of: impl Fn(usize) -> usize,
    session: &str,
) -> std::path::PathBuf {
    let certs = dir.join("certs");
    let o = veil(&["certs", "--parties", &parties.to_string(), "--out", certs.to_str().unwrap()]);
    assert!(o.status.success());
    let mut toml = format!(
        "session = \"{session}\"\nca = \"certs/ca.pem\"\nconnect_timeout_s = 3\nrecv_timeout_s = 5\n"
    );
    for i in 0..parties {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let c = cert_of(i);
        toml.push_str(&format!(
            "[[party]]\naddress = \"127.0.0.1:{port}\"\ncert = \"certs/party-{c}.pem\"\nkey = \"certs/party-{c}.key\"\n"
        ));
    }
    toml.push_str("[job]\nkind = \"demo-mul\"\nlength = 2\noutput = 0\n");
    let path = dir.join("deployment.toml");
    std::fs::write(&path, toml).unwrap();
    std::fs::write(dir.join("in.json"), "[1.0, 2.0]").unwrap();
    path
}

#[test]
fn party_errors_are_clear() {
    let dir = tempfile::tempdir().unwrap();
    let missing = veil(&["party", "--config", "/nonexistent/veil.toml", "--id", "0"]);
    assert!(!missing.status.success());
    assert!(stderr(&missing).contains("cannot read the config file"), "{}", stderr(&missing));

    let cfg = write_config(dir.path(), 2, |i| i, "not-hex");
    let o = veil(&["party", "--config", cfg.to_str().unwrap(), "--id", "0"]);
    assert!(stderr(&o).contains("session must be 32 hex digits"), "{}", stderr(&o));

    let cfg = write_config(dir.path(), 2, |i| i, "00112233445566778899aabbccddeeff");
    let o = veil(&["party", "--config", cfg.to_str().unwrap(), "--id", "5"]);
    assert!(stderr(&o).contains("party 5 is not in the config"), "{}", stderr(&o));
    let o = veil(&["party", "--config", cfg.to_str().unwrap(), "--id", "0"]);
    assert!(stderr(&o).contains("pass it with --input"), "{}", stderr(&o));
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(
        &cfg,
        text.replace("recv_timeout_s = 5\n", "recv_timeout_s = 5\nlink_delay_us = 60000000\n"),
    )
    .unwrap();
    let o = veil(&["party", "--config", cfg.to_str().unwrap(), "--id", "0"]);
    assert!(stderr(&o).contains("link_delay_us = 60000000 is more than"), "{}", stderr(&o));

    // Timeouts out of range (the largest used to panic with an overflow) and two parties on
    // one address are refused when the file is read.
    let cfg = write_config(dir.path(), 2, |i| i, "00112233445566778899aabbccddeeff");
    let text = std::fs::read_to_string(&cfg).unwrap();
    let cases = [
        (
            text.replace("connect_timeout_s = 3", "connect_timeout_s = 18446744073709551615"),
            "connect_timeout_s = 18446744073709551615: this timeout",
        ),
        (
            text.replace("recv_timeout_s = 5", "recv_timeout_s = 0"),
            "recv_timeout_s = 0: this timeout must be between 3 s",
        ),
        (
            text.replace("recv_timeout_s = 5", "recv_timeout_s = 5\nstall_timeout_s = 4"),
            "stall_timeout_s = 4: this timeout must be between 5 s",
        ),
    ];
    for (bad, want) in cases {
        std::fs::write(&cfg, bad).unwrap();
        let o = veil(&["party", "--config", cfg.to_str().unwrap(), "--id", "0"]);
        assert!(!o.status.success() && stderr(&o).contains(want), "{}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    }
    let first = text.lines().find(|l| l.starts_with("address")).unwrap();
    let mut seen = 0;
    let same: String = text
        .lines()
        .map(|l| {
            if l.starts_with("address") {
                seen += 1;
                first.to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(seen, 2);
    std::fs::write(&cfg, same).unwrap();
    let o = veil(&["party", "--config", cfg.to_str().unwrap(), "--id", "0"]);
    assert!(stderr(&o).contains("parties 0 and 1 both listen on"), "{}", stderr(&o));
}

#[test]
fn party_with_another_partys_certificate_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    // Party 1 presents party 0's certificate.
    let cfg = write_config(dir.path(), 2, |_| 0, "00112233445566778899aabbccddeeff");
    let input = dir.path().join("in.json");
    let spawn = |id: &str| {
        Command::new(env!("CARGO_BIN_EXE_veil"))
            .args([
                "party",
                "--config",
                cfg.to_str().unwrap(),
                "--id",
                id,
                "--input",
                input.to_str().unwrap(),
            ])
            .output()
    };
    let (o0, o1) = std::thread::scope(|s| {
        let a = s.spawn(|| spawn("0").unwrap());
        let b = s.spawn(|| spawn("1").unwrap());
        (a.join().unwrap(), b.join().unwrap())
    });
    assert!(!o0.status.success() && !o1.status.success());
    let e1 = stderr(&o1);
    assert!(e1.contains("claims to be party 1") && e1.contains("party-1.veil"), "{e1}");
}

#[test]
fn run_and_eval_classify_digits_privately_under_aegis() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let model = root.join("models/digits-cnn/model.onnx");
    let m = model.to_str().unwrap();
    let o = veil(&["run", "--model", m, "--batch", "3", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["family"], "aegis");
    assert_eq!(r["model"], "digits-cnn");
    assert_eq!(r["predictions"], r["plaintext_predictions"]);
    assert!(r["max_abs_error"].as_f64().unwrap() < 0.02);
    let phases: Vec<&str> = r["per_party"][0]["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["phase"].as_str().unwrap())
        .collect();
    assert_eq!(phases, ["offline", "online", "verify"]);
    let o = veil(&["eval", "--model", m, "--batch", "2", "--limit", "4", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let last = String::from_utf8_lossy(&o.stdout).lines().last().unwrap().to_string();
    let s: serde_json::Value = serde_json::from_str(&last).unwrap();
    assert_eq!(s["images"], 4);
    assert_eq!(s["agreement"], 1.0);
    // Clear errors: aegis has no semi-honest mode and no transformer layers; a missing image set.
    let o = veil(&["run", "--model", m, "--security", "semi-honest"]);
    assert!(stderr(&o).contains("aegis runs only with --security malicious"), "{}", stderr(&o));
    let o = veil(&["run", "--family", "aegis", "--text", "hi"]);
    assert!(stderr(&o).contains("does not run transformers"), "{}", stderr(&o));
    let o = veil(&["run", "--model", m, "--images", "/nonexistent.safetensors"]);
    assert!(stderr(&o).contains("no images at"), "{}", stderr(&o));
    // The rings: a bad name, and the Z_2^64 rings, which are mosformer's, under aegis.
    let o = veil(&["run", "--rings", "z32", "--text", "hi"]);
    assert!(stderr(&o).contains("--rings must be 'mixed' or 'z64'"), "{}", stderr(&o));
    let o = veil(&["run", "--model", m, "--rings", "z64"]);
    assert!(stderr(&o).contains("--rings z64 is a mosformer option"), "{}", stderr(&o));
}

#[test]
fn classify_deployment_runs_five_processes_with_the_weights_at_the_model_owner_only() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let onnx = root.join("models/digits-cnn/model.onnx");
    let images = root.join("models/digits-cnn/test.safetensors");
    let dir = tempfile::tempdir().unwrap();
    let public = dir.path().join("digits.graph.json");
    let o = veil(&["graph", "--model", onnx.to_str().unwrap(), "--out", public.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let job = "kind = \"classify\"\nfamily = \"aegis\"\nsecurity = \"malicious\"\n";
    let cfg = model_job_config(dir.path(), job, 120);
    let c = cfg.to_str().unwrap();
    let (pm, po, pi) = (public.to_str().unwrap(), onnx.to_str().unwrap(), images.to_str().unwrap());
    // Clear errors first: weights at a server, none at the model owner, images elsewhere.
    let o = veil(&["party", "--config", c, "--id", "0", "--model", po]);
    assert!(stderr(&o).contains("must not hold the weights"), "{}", stderr(&o));
    let o = veil(&["party", "--config", c, "--id", "4", "--model", pm]);
    assert!(stderr(&o).contains("pass the .onnx file"), "{}", stderr(&o));
    let o = veil(&["party", "--config", c, "--id", "1", "--model", pm, "--images", pi]);
    assert!(stderr(&o).contains("has no images"), "{}", stderr(&o));
    let children: Vec<_> = (0..5)
        .map(|id| {
            let mut args = vec!["party", "--config", c, "--id"];
            let id_s = id.to_string();
            args.push(Box::leak(id_s.into_boxed_str()));
            args.extend(["--model", if id == 4 { po } else { pm }, "--json"]);
            if id == 3 {
                args.extend(["--images", pi, "--batch", "2"]);
            }
            spawn_veil(&args)
        })
        .collect();
    let outs: Vec<Output> = children.into_iter().map(|c| c.wait_with_output().unwrap()).collect();
    for (i, o) in outs.iter().enumerate() {
        assert!(o.status.success(), "party {i}: {}", stderr(o));
    }
    let owner: serde_json::Value = serde_json::from_slice(&outs[3].stdout).unwrap();
    let logits = owner["output"].as_array().unwrap();
    assert_eq!(logits.len(), 20);
    let server: serde_json::Value = serde_json::from_slice(&outs[0].stdout).unwrap();
    assert!(server["output"].is_null());
}

#[test]
fn a_vit_folder_runs_in_the_clear_and_refuses_two_images_per_run() {
    let vit = Path::new(env!("CARGO_MANIFEST_DIR")).join("../nn/tests/data/tiny-vit");
    let vit = vit.to_str().unwrap();
    let o = veil(&["plain", "--model", vit, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["family"], "mosformer", "a ViT defaults to mosformer");
    assert_eq!(r["shape"], serde_json::json!([1, 3]), "one image by default");
    assert_eq!(r["overflows"], serde_json::json!([]));
    let o = veil(&["run", "--model", vit, "--batch", "2"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("one image per run"), "{}", stderr(&o));
}

/// The servers of an `embed` deployment make their material ahead (`--prepare`, each in its own
/// folder, linked among themselves only), then a session with `offline = "stored"` uses it and
/// the files are gone; `veil prepare` and `veil run --material` do the same with threads.
#[test]
fn stored_material_made_by_the_servers_serves_one_embed_session() {
    let tiny = Path::new(env!("CARGO_MANIFEST_DIR")).join("../nn/tests/data/tiny-gpt2");
    let model = tiny.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let job = "kind = \"embed\"\nfamily = \"mosformer\"\nsecurity = \"malicious\"\noffline = \"stored\"\n";
    let cfg = model_job_config(dir.path(), job, 60);
    let c = cfg.to_str().unwrap();
    let folder = |id: usize| dir.path().join(format!("host-{id}")).to_str().unwrap().to_string();
    let base = |id: usize| -> Vec<String> {
        ["party", "--config", c, "--id", &id.to_string(), "--model", model, "--json"]
            .map(String::from)
            .to_vec()
    };
    // Clear errors: a stored job's server without its folder; an owner asked to prepare.
    let o = veil(&["party", "--config", c, "--id", "0", "--model", model]);
    assert!(stderr(&o).contains("pass this server's folder with --material"), "{}", stderr(&o));
    let o =
        veil(&["party", "--config", c, "--id", "3", "--model", model, "--prepare", "6", "--material", "x"]);
    assert!(stderr(&o).contains("is not a server"), "{}", stderr(&o));

    let makers: Vec<_> = (0..3)
        .map(|id| {
            spawn_veil(
                &[base(id), vec!["--prepare".into(), "6".into(), "--material".into(), folder(id)]].concat(),
            )
        })
        .collect();
    for (id, m) in makers.into_iter().enumerate() {
        let o = m.wait_with_output().unwrap();
        assert!(o.status.success(), "server {id}: {}", stderr(&o));
        let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert!(r["file_bytes"].as_u64().unwrap() > 0 && r["gates"].as_u64().unwrap() > 0, "{r}");
        assert!(Path::new(&folder(id)).join(format!("server-{id}.material")).exists());
    }
    let parties: Vec<_> = (0..5)
        .map(|id| {
            let mut args = base(id);
            if id < 3 {
                args.extend(["--material".into(), folder(id)]);
            }
            if id == 3 {
                args.extend(["--text".into(), "Hello there".into()]);
            }
            spawn_veil(&args)
        })
        .collect();
    let outs: Vec<Output> = parties.into_iter().map(|p| p.wait_with_output().unwrap()).collect();
    for (i, o) in outs.iter().enumerate() {
        assert!(o.status.success(), "party {i}: {}", stderr(o));
    }
    let server: serde_json::Value = serde_json::from_slice(&outs[0].stdout).unwrap();
    assert_eq!(server["material"], "stored");
    let owner: serde_json::Value = serde_json::from_slice(&outs[3].stdout).unwrap();
    assert_eq!(owner["output"].as_array().unwrap().len(), 400);
    for id in 0..3 {
        assert!(
            !Path::new(&folder(id)).join(format!("server-{id}.material")).exists(),
            "server {id} kept it"
        );
    }

    // Threads: `veil prepare`, then `veil run --material` once; a second run finds nothing.
    let m = dir.path().join("threads");
    let ms = m.to_str().unwrap();
    let o = veil(&["prepare", "--model", model, "--tokens", "6", "--out", ms, "--link", "memory"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let run =
        ["run", "--model", model, "--text", "Hello there", "--material", ms, "--link", "memory", "--json"];
    let o = veil(&run);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(r["cosine_vs_plaintext"].as_f64().unwrap() > 0.99, "{r}");
    let o = veil(&run);
    assert!(stderr(&o).contains("serves one session"), "{}", stderr(&o));
    let o = veil(&["run", "--model", model, "--material", ms, "--offline", "ahead"]);
    assert!(stderr(&o).contains("does not go with --offline ahead"), "{}", stderr(&o));
}

#[test]
fn a_deployment_with_link_delay_holds_every_frame_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(dir.path(), 2, |i| i, "00112233445566778899aabbccddeeff");
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(
        &cfg,
        text.replace("recv_timeout_s = 5\n", "recv_timeout_s = 5\nlink_delay_us = 150000\n"),
    )
    .unwrap();
    let input = dir.path().join("in.json");
    let args = |id: &str| {
        ["party", "--config", cfg.to_str().unwrap(), "--id", id, "--input", input.to_str().unwrap(), "--json"]
            .map(String::from)
    };
    let other = spawn_veil(&args("1"));
    let o = veil(&args("0").iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(other.wait_with_output().unwrap().status.success());
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["output"], serde_json::json!([1.0, 4.0]));
    // Each of the online phase's rounds is a frame held 150 ms at its receiver.
    let online = &r["phases"][1];
    let rounds = online["rounds"].as_f64().unwrap();
    assert!(rounds >= 1.0);
    assert!(online["seconds"].as_f64().unwrap() >= 0.15 * rounds, "{online}");
}

/// `veil eval --resume` keeps one record per sentence: a sentence listed twice is run once, and
/// a second eval over the same list runs nothing and reports the same rows.
#[test]
fn a_resumed_text_eval_runs_each_sentence_once() {
    let tiny = Path::new(env!("CARGO_MANIFEST_DIR")).join("../nn/tests/data/tiny-gpt2");
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("sentences.txt");
    std::fs::write(&list, "Hello there.\nA cat sat.\nHello there.\n").unwrap();
    let records = dir.path().join("records.jsonl");
    let (model, sentences) = (tiny.to_str().unwrap(), list.to_str().unwrap());
    let eval = |extra: &[&str]| {
        let base =
            ["eval", "--model", model, "--sentences", sentences, "--security", "semi-honest", "--json"];
        veil(&[&base[..], extra].concat())
    };
    let args = ["--resume", records.to_str().unwrap()];
    let first = eval(&args);
    assert!(first.status.success(), "{}", stderr(&first));
    let kept = std::fs::read_to_string(&records).unwrap();
    assert_eq!(kept.lines().count(), 2, "one record per distinct sentence: {kept}");
    let rows = |o: &Output| -> Vec<serde_json::Value> {
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    };
    let (a, b) = (rows(&first), rows(&eval(&args)));
    assert_eq!(a.len(), 4, "three rows and a summary");
    assert_eq!(a[0], a[2], "the repeat reuses the first record");
    assert_eq!(a, b, "the resumed eval ran nothing new");
    assert_eq!(std::fs::read_to_string(&records).unwrap(), kept);
    assert!(stderr(&first).contains("more for the 1 sentence left"), "{}", stderr(&first));

    // --limit runs the first sentences only.
    let limited = eval(&["--limit", "1"]);
    assert!(limited.status.success(), "{}", stderr(&limited));
    assert_eq!(rows(&limited).len(), 2, "one row and a summary");
}

#[test]
fn families_are_listed_and_additive_runs_the_digits_among_any_number_of_parties() {
    let o = veil(&["families", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let listed: Vec<serde_json::Value> =
        String::from_utf8_lossy(&o.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let names: Vec<&str> = listed.iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["mosformer", "aegis", "mm", "additive"]);
    assert_eq!(listed[3]["parties"]["at_least"], 2);
    assert_eq!(listed[2]["parties"]["exactly"], 2);
    assert_eq!(listed[0]["owners"], serde_json::json!(["outside"]));
    let o = veil(&["families"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("InsecureDealer"));

    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let onnx = root.join("models/digits-cnn/model.onnx");
    let m = onnx.to_str().unwrap();
    for n in ["2", "3", "5"] {
        let o =
            veil(&["run", "--model", m, "--family", "additive", "--parties", n, "--batch", "2", "--json"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(r["per_party"].as_array().unwrap().len().to_string(), n);
        assert_eq!(r["predictions"], r["plaintext_predictions"]);
        assert!(r["preprocessing"].as_str().unwrap().contains("InsecureDealer"), "{r}");
        assert_eq!(r["per_party"][0]["role"], "server, data owner");
    }
    let o = veil(&["run", "--model", m, "--family", "additive", "--parties", "2", "--owners", "outside"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("servers 0, 1; data owner 2; model owner 3") && text.contains("InsecureDealer"),
        "{text}"
    );
    // Clear errors: a party count, a placement or a family the registry does not have.
    let o = veil(&["run", "--model", m, "--family", "additive", "--parties", "1"]);
    assert!(stderr(&o).contains("additive runs among 2 or more computing parties, not 1"), "{}", stderr(&o));
    let o = veil(&["run", "--model", m, "--parties", "4"]);
    assert!(stderr(&o).contains("aegis runs among 3 computing parties, not 4"), "{}", stderr(&o));
    let o = veil(&["run", "--model", m, "--owners", "inside"]);
    assert!(stderr(&o).contains("cannot place the data and model owners inside"), "{}", stderr(&o));
    let o = veil(&["run", "--model", m, "--family", "spdz"]);
    assert!(
        stderr(&o).contains("no family `spdz`; the families are mosformer, aegis, mm, additive"),
        "{}",
        stderr(&o)
    );
    let o = veil(&["run", "--family", "additive", "--text", "hi"]);
    assert!(stderr(&o).contains("does not run transformers"), "{}", stderr(&o));
}

#[test]
fn additive_deployment_runs_one_process_per_party_with_the_owners_among_them() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let onnx = root.join("models/digits-cnn/model.onnx");
    let images = root.join("models/digits-cnn/test.safetensors");
    let dir = tempfile::tempdir().unwrap();
    let public = dir.path().join("digits.graph.json");
    let o = veil(&["graph", "--model", onnx.to_str().unwrap(), "--out", public.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (pm, po, pi) = (public.to_str().unwrap(), onnx.to_str().unwrap(), images.to_str().unwrap());
    // A family that takes 3 computing parties refuses a deployment of 4.
    let aegis = model_job_config_of(dir.path(), 4, "kind = \"classify\"\nfamily = \"aegis\"\n", 60);
    let o = veil(&["party", "--config", aegis.to_str().unwrap(), "--id", "0", "--model", pm]);
    assert!(stderr(&o).contains("aegis runs among 3 computing parties, not 2"), "{}", stderr(&o));
    let job = "kind = \"classify\"\nfamily = \"additive\"\nowners = \"inside\"\n";
    let cfg = model_job_config_of(dir.path(), 3, job, 60);
    let c = cfg.to_str().unwrap();
    // Party 0 is the data owner (images, public model), party 1 the model owner (.onnx).
    let o = veil(&["party", "--config", c, "--id", "2", "--model", pm, "--images", pi]);
    assert!(stderr(&o).contains("has no images"), "{}", stderr(&o));
    let children: Vec<_> = (0..3)
        .map(|id| {
            let id_s: &'static str = Box::leak(id.to_string().into_boxed_str());
            let mut args = vec!["party", "--config", c, "--id", id_s, "--json"];
            args.extend(["--model", if id == 1 { po } else { pm }]);
            if id == 0 {
                args.extend(["--images", pi, "--batch", "2"]);
            }
            spawn_veil(&args)
        })
        .collect();
    let outs: Vec<Output> = children.into_iter().map(|c| c.wait_with_output().unwrap()).collect();
    for (i, o) in outs.iter().enumerate() {
        assert!(o.status.success(), "party {i}: {}", stderr(o));
    }
    let owner: serde_json::Value = serde_json::from_slice(&outs[0].stdout).unwrap();
    assert_eq!(owner["role"], "server, data owner");
    assert_eq!(owner["output"].as_array().unwrap().len(), 20);
    for o in &outs[1..] {
        let p: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert!(p["output"].is_null());
    }
}

/// The fault-injection soak's short version: one run of each fault (a party killed, frozen,
/// corrupting a frame, sending an oversized one, a stranger, damaged and replayed material,
/// and none) across processes
/// over TLS. No wrong output, no output after a failed check, no hang, no honest run failed.
#[test]
fn the_soak_survives_one_run_of_each_fault() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let (tiny, cnn) =
        (root.join("crates/nn/tests/data/tiny-gpt2"), root.join("models/digits-cnn/model.onnx"));
    let o = veil(&[
        "soak",
        "--runs",
        "8",
        "--seed",
        "3",
        "--json",
        "--text-model",
        tiny.to_str().unwrap(),
        "--cnn",
        cnn.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}\n{stdout}", stderr(&o));
    let summary: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    let s = &summary["summary"];
    assert_eq!(s["runs"], 8, "{s}");
    for field in
        ["wrong_outputs", "released_after_failed_check", "hangs", "honest_runs_failed", "failed_verdicts"]
    {
        assert_eq!(s[field], 0, "{field}: {s}");
    }
    assert!(s["effective_faults"].as_u64().unwrap() >= 3, "{s}");
    let runs: Vec<serde_json::Value> =
        stdout.lines().filter(|l| l.contains("\"run\"")).map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(runs.len(), 8);
    let replayed = runs.iter().find(|r| r["fault"]["kind"] == "replayed-material").unwrap();
    assert!(replayed["parties"][0]["said"].as_str().unwrap().contains("already used"), "{replayed}");
}

/// `veil tokens` counts a text's tokens, and `veil prepare --text` makes material for that
/// count, which the session on that text then uses.
#[test]
fn tokens_are_counted_for_prepare() {
    let tiny = Path::new(env!("CARGO_MANIFEST_DIR")).join("../nn/tests/data/tiny-gpt2");
    let model = tiny.to_str().unwrap();
    let o = veil(&["tokens", "--model", model, "--text", "Hello there", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let n = r["tokens"].as_u64().unwrap();
    assert!(n > 0 && r["ids"].as_array().unwrap().len() as u64 == n, "{r}");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let o = veil(&[
        "prepare",
        "--model",
        model,
        "--text",
        "Hello there",
        "--out",
        out,
        "--link",
        "memory",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = veil(&["run", "--model", model, "--text", "Hello there", "--material", out, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = veil(&["prepare", "--model", model, "--out", out]);
    assert!(stderr(&o).contains("--tokens"), "{}", stderr(&o));
}
