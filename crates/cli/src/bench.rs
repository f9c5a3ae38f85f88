//! `veil bench ops`: per-operation benchmarks (JSON Lines with `--json`, a table otherwise;
//! progress on standard error).

use anyhow::bail;
use veil_bench::ops::{MOSFORMER_OPS, OpRecord, mosformer_op};

/// Default sizes: 10^4, 10^5, 10^6 elements (gates with FSS material run in pieces of
/// 10^4, made offline and consumed online one after the other, to bound memory).
fn default_sizes(_op: &str) -> Vec<usize> {
    vec![10_000, 100_000, 1_000_000]
}

pub use crate::family::parse_security;

/// `veil bench model`: one whole model, per-phase costs per server, the paper beside.
pub fn model(
    family: &str,
    model: &str,
    security: &str,
    (batch, images_per_check): (usize, Option<usize>),
    seq: usize,
    json: bool,
) -> anyhow::Result<()> {
    if let Some((_, depth)) = veil_bench::encoder::named_model(model, seq) {
        // Random weights of the real shapes, every layer, material made on demand.
        let size = (seq, depth, veil_bench::encoder::ON_DEMAND_CHUNK);
        return layer(family, security, model, size, "on-demand", json);
    }
    let security = parse_security(security)?;
    let r = if model == "minilm" {
        if family != "mosformer" {
            bail!("minilm runs under mosformer (aegis has no transformer layers)");
        }
        eprintln!("bench: all-MiniLM-L6-v2 on {seq} tokens under mosformer ...");
        veil_bench::model::bench_minilm(&crate::run::model_dir(None)?, security, seq)?
    } else {
        eprintln!("bench: {model} on {batch} random images under {family} ...");
        veil_bench::model::bench_cnn(model, family, security, batch, images_per_check)?
    };
    if json {
        println!("{}", serde_json::to_string(&r)?);
        return Ok(());
    }
    let size =
        r.batch.map(|b| format!("batch {b}")).or(r.seq.map(|s| format!("{s} tokens"))).unwrap_or_default();
    println!(
        "{} {} ({}), {size}: per server (mean; rounds = longest chain), MiB = 2^20 bytes",
        r.family, r.model, r.security
    );
    println!("  phase      MiB/server   rounds   msgs/server   seconds");
    for (name, p, s) in [
        ("offline", &r.offline, r.seconds.offline),
        ("online", &r.online, r.seconds.online),
        ("verify", &r.verify, r.seconds.verify),
    ] {
        let mib = p.bytes_per_party / f64::from(1u32 << 20);
        println!("  {name:<9} {mib:>11.3} {:>8} {:>13.0} {s:>9.2}", p.rounds, p.messages_per_party);
    }
    println!("  logits vs float64: max |err| {:.4}, mean {:.5}", r.max_abs_error, r.mean_abs_error);
    for p in &r.paper {
        println!("  paper: {} = {} {} ({})", p.source, p.value, p.unit, p.convention);
    }
    Ok(())
}

/// `veil bench layer`: measured BERT-base encoder layers (`tokens`, `layers` of them, gate
/// calls in chunks of at most `chunk` elements).
pub fn layer(
    family: &str,
    security: &str,
    model: &str,
    (tokens, layers, chunk): (usize, usize, usize),
    material: &str,
    json: bool,
) -> anyhow::Result<()> {
    use veil_bench::encoder::Material;
    if family == "mm" {
        return mm_layer(model, tokens, layers, json);
    }
    if family != "mosformer" {
        bail!("no layer benchmark for family '{family}' yet (available: mosformer, mm)");
    }
    let security = parse_security(security)?;
    let material = match material {
        "on-demand" => Material::OnDemand,
        "ahead" => Material::Ahead,
        m => bail!("unknown --material '{m}' (on-demand or ahead)"),
    };
    let Some((shape, _)) = veil_bench::encoder::named_model(model, tokens) else {
        bail!("no layer shape for model '{model}' ({})", veil_bench::encoder::NAMED_MODELS);
    };
    let name = shape.model_name();
    eprintln!("bench: {layers} {name} layers at {tokens} tokens ...");
    let r = veil_bench::encoder::bench_layer(shape, layers, material.clone(), security, chunk)?;
    if json {
        println!("{}", serde_json::to_string(&r)?);
        return Ok(());
    }
    let mib = |b: f64| b / f64::from(1u32 << 20);
    let scope = if layers == 1 { "its one layer".to_string() } else { format!("all {layers} layers") };
    let layers_word = if layers == 1 { "layer" } else { "layers" };
    println!(
        "mosformer {} {name}, {layers} {layers_word} at {tokens} tokens, material {} ({scope}, per server), gate calls in chunks of {chunk} elements:",
        r.security, r.material
    );
    println!(
        "  offline: {:>10.1} MiB sent  {:>5} rounds  {:>8.2} s",
        mib(r.offline.bytes_per_party),
        r.offline.rounds,
        r.offline.seconds
    );
    println!(
        "  online:  {:>10.1} MiB sent  {:>5} rounds  {:>8.2} s",
        mib(r.online.bytes_per_party),
        r.online.rounds,
        r.online.seconds
    );
    println!("  per block kind:          online MiB  rounds  seconds   offline MiB  rounds  seconds");
    for b in &r.blocks {
        println!(
            "    {:<20} {:>11.2} {:>7} {:>8.2} {:>13.1} {:>7} {:>8.2}",
            b.block,
            mib(b.online.bytes_per_party),
            b.online.rounds,
            b.online.seconds,
            mib(b.offline.bytes_per_party),
            b.offline.rounds,
            b.offline.seconds
        );
    }
    let peak = r.peak_rss_mib.map(|m| format!("{m:.0} MiB")).unwrap_or_else(|| "-".into());
    if material == Material::Ahead {
        println!("  material the online phase still had to make: {}", r.made_online);
    }
    if let Some(e) = r.max_abs_error {
        println!("  output vs the float64 model: max |error| {e:.4}");
    }
    println!("  peak memory of the process (three servers, two owners): {peak}");
    for p in &r.paper {
        println!("  paper: {} = {} {} ({})", p.source, p.value, p.unit, p.convention);
    }
    Ok(())
}

/// The ops to run: `op` if the family has it, else all of them.
fn select_ops<'a>(family: &str, all: &[&'a str], op: Option<&str>) -> anyhow::Result<Vec<&'a str>> {
    match op {
        Some(o) => match all.iter().find(|&&a| a == o) {
            Some(&a) => Ok(vec![a]),
            None => bail!("{family} has no op '{o}' (available: {})", all.join(", ")),
        },
        None => Ok(all.to_vec()),
    }
}

/// `veil bench ops --family he`: BFV's operations and the Z_p-OLE, CKKS's operations, at every
/// preset of their scheme (or the one named).
pub fn he_ops(
    n: Option<usize>,
    op: Option<&str>,
    preset: Option<&str>,
    threads: Option<usize>,
    json: bool,
) -> anyhow::Result<()> {
    use veil_bench::he_ops::{CKKS_OPS, HE_OPS, he_op};
    use veil_he::BfvPreset;
    use veil_he::ckks::CkksPreset;
    let all: Vec<&str> = HE_OPS.iter().chain(CKKS_OPS).copied().collect();
    let mut ops = select_ops("he", &all, op)?;
    // A preset names its scheme: run that scheme's ops only.
    let bfv_preset = preset.map(BfvPreset::from_name);
    let ckks_preset = preset.map(CkksPreset::from_name);
    match (&bfv_preset, &ckks_preset) {
        (Some(Err(_)), Some(Err(_))) => bail!(
            "no HE preset '{}' (BFV: {}; CKKS: {})",
            preset.unwrap_or_default(),
            BfvPreset::ALL.map(|p| p.name()).join(", "),
            CkksPreset::ALL.map(|p| p.name()).join(", ")
        ),
        (Some(Ok(_)), _) => ops.retain(|o| o.starts_with("bfv")),
        (_, Some(Ok(_))) => ops.retain(|o| o.starts_with("ckks")),
        _ => {}
    }
    if ops.is_empty() {
        bail!("--op {} does not run at preset {}", op.unwrap_or_default(), preset.unwrap_or_default());
    }
    // The matrix product runs when asked for by name (it takes seconds to minutes).
    if op.is_none() {
        ops.retain(|o| *o != "ckks-matmul");
    }
    let matmul = ops.contains(&"ckks-matmul");
    ops.retain(|o| *o != "ckks-matmul");
    let (ckks_ops, bfv_ops): (Vec<&str>, Vec<&str>) = ops.into_iter().partition(|o| o.starts_with("ckks"));
    let ckks_presets = match ckks_preset {
        Some(Ok(p)) => vec![p],
        _ => vec![CkksPreset::N8192, CkksPreset::N16384, CkksPreset::N32768],
    };
    if !ckks_ops.is_empty() {
        ckks_table(&ckks_ops, &ckks_presets, threads.unwrap_or(1), json)?;
    }
    if matmul {
        let p = match ckks_preset {
            Some(Ok(p)) => p,
            _ => CkksPreset::N16384,
        };
        // The BERT-base projection unless --n asks for fewer inner and output columns.
        let d = n.unwrap_or(768);
        let threads = threads.unwrap_or(1);
        eprintln!("bench: ckks-matmul 128×{d} by {d}×{d} preset={} threads={threads} ...", p.name());
        let r = veil_bench::he_ops::ckks_matmul(p, [128, d, d], threads)?;
        if json {
            println!("{}", serde_json::to_string(&r)?);
        } else {
            println!(
                "ckks-matmul {}×{}·{}×{} at {} level {}: {:.3} s on {} thread(s), {} rotations, {} plaintext products, {} → {} ciphertexts ({:.1} → {:.1} MiB), Galois keys {:.1} MiB, largest error {:.2e}",
                r.shape[0],
                r.shape[1],
                r.shape[1],
                r.shape[2],
                r.preset,
                r.level,
                r.seconds,
                r.threads,
                r.rotations,
                r.plaintext_products,
                r.inputs[0],
                r.outputs[0],
                r.inputs[1] as f64 / 1048576.0,
                r.outputs[1] as f64 / 1048576.0,
                r.galois_key_bytes as f64 / 1048576.0,
                r.max_error
            );
        }
    }
    if bfv_ops.is_empty() {
        return Ok(());
    }
    let ops = bfv_ops;
    let presets = match bfv_preset {
        Some(Ok(p)) => vec![p],
        _ => BfvPreset::ALL.to_vec(),
    };
    let threads = threads.unwrap_or(1);
    if !json {
        println!(
            "{:<15} {:<10} {:>8} {:>7} {:>9} {:>10} {:>8} {:>11} {:>11} {:>7} {:>7} {:>6} {:>7}",
            "op",
            "preset",
            "n",
            "threads",
            "setup s",
            "seconds",
            "paper s",
            "MiB P0->P1",
            "MiB P1->P0",
            "rounds",
            "errors",
            "flood",
            "sigma"
        );
    }
    for &op in &ops {
        for &p in &presets {
            eprintln!("bench: {op} preset={} threads={threads} ...", p.name());
            let r = he_op(op, p, n, threads)?;
            if json {
                println!("{}", serde_json::to_string(&r)?);
                continue;
            }
            println!(
                "{:<15} {:<10} {:>8} {:>7} {:>9.3} {:>10.6} {:>8} {:>11.3} {:>11.3} {:>7} {:>7} {:>6} {:>7.1}",
                r.op,
                r.preset,
                r.n,
                r.threads,
                r.seconds[0],
                r.seconds[1],
                r.paper.as_ref().map(|p| format!("{:.3}", p.value)).unwrap_or_else(|| "-".into()),
                r.mib_online[0],
                r.mib_online[1],
                r.online_rounds,
                r.errors,
                format!("2^{}", r.flood_bits),
                r.sigma
            );
        }
    }
    if !json {
        println!(
            "(MiB = 2^20 bytes, the paper's \"MB\"; bfv-ole: P0 holds the key and queries, P1 answers; single-ciphertext ops: seconds per ciphertext on one thread; paper: M&M Tables IV and VII, SEAL 4.1 + HEXL, LAN; see --json for sources)"
        );
    }
    Ok(())
}

fn ckks_table(
    ops: &[&str],
    presets: &[veil_he::ckks::CkksPreset],
    threads: usize,
    json: bool,
) -> anyhow::Result<()> {
    if !json {
        println!(
            "{:<15} {:<12} {:>6} {:>6} {:>11} {:>11} {:>8} {:>10} {:>10} {:>11}",
            "op",
            "preset",
            "log N",
            "log Q",
            "seconds",
            "SEAL s",
            "ct KiB",
            "pk KiB",
            "rlk KiB",
            "galois KiB"
        );
    }
    for &op in ops {
        for &p in presets {
            eprintln!("bench: {op} preset={} threads={threads} ...", p.name());
            let r = veil_bench::he_ops::ckks_op(op, p, threads)?;
            if json {
                println!("{}", serde_json::to_string(&r)?);
                continue;
            }
            let kib = |b: usize| b as f64 / 1024.0;
            println!(
                "{:<15} {:<12} {:>6} {:>6} {:>11.6} {:>11} {:>8.0} {:>10.0} {:>10.0} {:>11.0}",
                r.op,
                r.preset,
                r.log_n,
                r.chain_bits.iter().sum::<usize>(),
                r.seconds,
                r.seal_seconds.map(|s| format!("{s:.6}")).unwrap_or_else(|| "-".into()),
                kib(r.bytes.ciphertext),
                kib(r.bytes.public_key),
                kib(r.bytes.relin_key),
                kib(r.bytes.galois_key)
            );
        }
    }
    if !json {
        println!(
            "(--threads threads, top level; ckks-hoisted: sixteen rotations of one ciphertext, SEAL one by one; SEAL s: seal-python on one thread, the same chain, the same run)"
        );
    }
    Ok(())
}

/// `veil bench ops --family mm`: the `mm` protocols so far at the paper's sizes (or `n`).
pub fn mm_ops(n: Option<usize>, op: Option<&str>, threads: Option<usize>, json: bool) -> anyhow::Result<()> {
    use veil_bench::mm_ops::{MM_OPS, mm_op};
    let ops = select_ops("mm", MM_OPS, op)?;
    let threads = threads.unwrap_or(1);
    if !json {
        println!(
            "{:<15} {:>9} {:>8} {:>9} {:>8} {:>9} {:>11} {:>11} {:>7}",
            "op", "n", "setup s", "online s", "total s", "paper s", "MiB P0->P1", "MiB P1->P0", "errors"
        );
    }
    for &op in &ops {
        eprintln!("bench: mm {op} threads={threads} ...");
        let r = mm_op(op, n, threads)?;
        if json {
            println!("{}", serde_json::to_string(&r)?);
            continue;
        }
        println!(
            "{:<15} {:>9} {:>8.3} {:>9.3} {:>8.3} {:>9} {:>11.3} {:>11.3} {:>7}",
            r.op,
            r.n,
            r.seconds[0],
            r.seconds[1],
            r.seconds_total,
            r.paper.as_ref().map(|p| format!("{:.3}", p.value)).unwrap_or_else(|| "-".into()),
            r.mib_total[0],
            r.mib_total[1],
            r.errors
        );
    }
    if !json {
        println!(
            "(both parties in this process, one thread each; Ferret COTs on demand; MiB = 2^20 bytes, the paper's \"MB\", everything included; paper: M&M Tables V, VIII, IX, X, single thread, LAN; see --json for shapes and sources)"
        );
    }
    Ok(())
}

/// `veil bench ops --family ot`: the OT engines at 10^6 and 10^7 COTs by default, then the
/// toolkit's ops at the paper's sizes.
pub fn ot_ops(
    n: Option<usize>,
    op: Option<&str>,
    ring: Option<u32>,
    (threads, cots): (Option<usize>, Option<&str>),
    json: bool,
) -> anyhow::Result<()> {
    use veil_bench::ot_ops::OT_OPS;
    use veil_bench::twopc_ops::{Cots, TWOPC_OPS};
    let all: Vec<&str> = OT_OPS.iter().chain(TWOPC_OPS).copied().collect();
    let ops = select_ops("ot", &all, op)?;
    let threads = threads.unwrap_or(1);
    let cots = match cots {
        None | Some("ahead") => Cots::Ahead,
        Some("on-demand") => Cots::OnDemand,
        Some(other) => bail!("--cots {other}: use ahead or on-demand"),
    };
    let (engines, toolkit): (Vec<&str>, Vec<&str>) = ops.into_iter().partition(|o| OT_OPS.contains(o));
    if !engines.is_empty() {
        engine_ops(&engines, n, threads, json)?;
    }
    if !toolkit.is_empty() {
        toolkit_ops(&toolkit, n, ring, (threads, cots), json)?;
    }
    Ok(())
}

fn toolkit_ops(
    ops: &[&str],
    n: Option<usize>,
    ring: Option<u32>,
    (threads, cots): (usize, veil_bench::twopc_ops::Cots),
    json: bool,
) -> anyhow::Result<()> {
    use veil_bench::twopc_ops::twopc_op;
    if !json {
        println!(
            "{:<12} {:>4} {:>9} {:>7} {:>8} {:>9} {:>9} {:>8} {:>9} {:>11} {:>11} {:>7} {:>7} {:>9}",
            "op",
            "ring",
            "n",
            "threads",
            "setup s",
            "offline s",
            "online s",
            "total s",
            "paper s",
            "MiB P0->P1",
            "MiB P1->P0",
            "rounds",
            "errors",
            "peak MiB"
        );
    }
    for &op in ops {
        let bits = ring.unwrap_or(if op == "cmp" { 32 } else { 64 });
        let size = n.unwrap_or(if op == "trunc" { 10_000_000 } else { 1 << 20 });
        eprintln!("bench: {op} ring={bits} n={size} threads={threads} cots={} ...", cots.name());
        let r = twopc_op(op, size, bits, threads, cots)?;
        if json {
            println!("{}", serde_json::to_string(&r)?);
            continue;
        }
        println!(
            "{:<12} {:>4} {:>9} {:>7} {:>8.3} {:>9.3} {:>9.3} {:>8.3} {:>9} {:>11.3} {:>11.3} {:>7} {:>7} {:>9}",
            r.op,
            r.ring_bits,
            r.n,
            r.threads,
            r.seconds[0],
            r.seconds[1],
            r.seconds[2],
            r.seconds_total,
            r.paper.as_ref().map(|p| format!("{:.3}", p.value)).unwrap_or_else(|| "-".into()),
            r.mib_total[0],
            r.mib_total[1],
            r.online_rounds,
            r.errors,
            r.peak_rss_mib.map(|m| format!("{m:.0}")).unwrap_or_else(|| "-".into())
        );
    }
    if !json {
        println!(
            "(MiB = 2^20 bytes, everything included, the unit of the paper's tables (written MB there); paper s: M&M single thread with Ferret setup, LAN between two machines, see --json for the source; here both parties share this machine)"
        );
    }
    Ok(())
}

fn engine_ops(ops: &[&str], n: Option<usize>, threads: usize, json: bool) -> anyhow::Result<()> {
    use veil_bench::ot_ops::ot_op;
    if !json {
        println!(
            "{:<11} {:>10} {:>7} {:>9} {:>10} {:>12} {:>12} {:>9} {:>10} {:>7} {:>9}",
            "op",
            "n",
            "threads",
            "setup s",
            "extend s",
            "COT/s",
            "COT/s+setup",
            "bits/COT",
            "+setup",
            "paper",
            "peak MiB"
        );
    }
    for &op in ops {
        for size in n.map(|v| vec![v]).unwrap_or_else(|| vec![1_000_000, 10_000_000]) {
            eprintln!("bench: {op} n={size} threads={threads} ...");
            let r = ot_op(op, size, threads)?;
            if json {
                println!("{}", serde_json::to_string(&r)?);
                continue;
            }
            println!(
                "{:<11} {:>10} {:>7} {:>9.3} {:>10.3} {:>12.3e} {:>12.3e} {:>9.3} {:>10.3} {:>7} {:>9}",
                r.op,
                r.n,
                r.threads,
                r.seconds.setup,
                r.seconds.extend,
                r.cots_per_second,
                r.cots_per_second_with_setup,
                r.bits_per_cot,
                r.bits_per_cot_with_setup,
                r.paper.as_ref().map(|p| format!("{:.0}", p.value)).unwrap_or_else(|| "-".into()),
                r.peak_rss_mib.map(|m| format!("{m:.0}")).unwrap_or_else(|| "-".into())
            );
        }
    }
    if !json {
        println!(
            "(both parties in this process, each on its own pool of --threads threads; bits/COT: sent by both parties per COT; paper: M&M Table II bits per COT, see --json for the source)"
        );
    }
    Ok(())
}

/// Runs the benchmarks and prints them.
pub fn ops(
    family: &str,
    security: &str,
    ring: Option<u32>,
    n: Option<usize>,
    op: Option<&str>,
    json: bool,
) -> anyhow::Result<()> {
    if family == "aegis" {
        return aegis_ops(security, ring, n, op, json);
    }
    if family != "mosformer" {
        bail!("no benchmarks for family '{family}' yet (available: mosformer, aegis, ot, he, mm)");
    }
    let malicious = parse_security(security)? == veil_runtime::Security::Malicious;
    let ops = select_ops("mosformer", MOSFORMER_OPS, op)?;
    if !json {
        println!(
            "{:<9} {:<11} {:>4} {:>9} {:>14} {:>8} {:>6} {:>12} {:>12} {:>9} {:>11} {:>7} {:>9}",
            "op",
            "security",
            "ring",
            "n",
            "online B/el",
            "paper",
            "rounds",
            "msgs/party",
            "offline B",
            "online s",
            "offline s",
            "pieces",
            "peak MiB"
        );
    }
    for op in ops {
        for size in n.map(|v| vec![v]).unwrap_or_else(|| default_sizes(op)) {
            eprintln!("bench: {op} n={size} ...");
            let r = mosformer_op(op, malicious, size, ring)?;
            print_record(&r, json)?;
        }
    }
    if !json {
        println!(
            "(online B/el: mean bytes sent per party per element; paper: the paper's figure in the same unit, see --json for its source; offline B: per party; rounds add up over pieces; peak MiB: the one process running all three parties)"
        );
    }
    Ok(())
}

fn print_record(r: &OpRecord, json: bool) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string(r)?);
        return Ok(());
    }
    let paper = r.paper.as_ref().map(|p| format!("{:.2}", p.value)).unwrap_or_else(|| "-".into());
    println!(
        "{:<9} {:<11} {:>4} {:>9} {:>14.3} {:>8} {:>6} {:>12.1} {:>12.0} {:>9.4} {:>11.4} {:>7} {:>9}",
        r.op,
        r.security,
        r.ring_bits,
        r.n,
        r.online_bytes_per_element,
        paper,
        r.online.rounds,
        r.online.messages_per_party,
        r.offline.bytes_per_party,
        r.seconds.online,
        r.seconds.offline,
        r.pieces,
        r.peak_rss_mib.map(|m| format!("{m:.0}")).unwrap_or_else(|| "-".into())
    );
    Ok(())
}

fn aegis_max_log(op: &str) -> usize {
    match op {
        "mul" | "trunc" | "sign" | "relu" => 20,
        _ => 18,
    }
}

/// `veil bench ops --family aegis`: n = 2^10 … 2^20 by default (less for the ops whose
/// verification holds more per element, see [`aegis_max_log`]).
fn aegis_ops(
    security: &str,
    ring: Option<u32>,
    n: Option<usize>,
    op: Option<&str>,
    json: bool,
) -> anyhow::Result<()> {
    use veil_bench::aegis_ops::{AEGIS_OPS, aegis_op};
    if parse_security(security)? == veil_runtime::Security::SemiHonest {
        eprintln!("note: aegis always runs its final verification; its cost is the 'verify' columns");
    }
    if ring.is_some_and(|r| r != 64) {
        bail!("aegis runs in Z_2^64");
    }
    let ops = select_ops("aegis", AEGIS_OPS, op)?;
    if !json {
        println!(
            "{:<8} {:<10} {:>4} {:>9} {:>12} {:>10} {:>6} {:>10} {:>12} {:>6} {:>11} {:>6} {:>9} {:>9} {:>6} {:>8}",
            "op",
            "security",
            "ring",
            "n",
            "online B/el",
            "paper",
            "rounds",
            "msgs/party",
            "offline B/el",
            "rounds",
            "verify B/el",
            "rounds",
            "online s",
            "offline s",
            "pieces",
            "peak MiB"
        );
    }
    for op in ops {
        let sizes: Vec<usize> = match n {
            Some(v) => vec![v],
            // The verification holds a whole run's recorded products and MAC'd lists in memory
            // (about 1.4 KB per sign per server): 2^20 elements need about 4.4 GB for the three
            // servers; MaxPool (four inputs per output) and inner products (64 terms per
            // output) stop at 2^18.
            None => (10..=aegis_max_log(op)).step_by(2).map(|e| 1usize << e).collect(),
        };
        for size in sizes {
            eprintln!("bench: aegis {op} n={size} ...");
            let r = aegis_op(op, size)?;
            if json {
                println!("{}", serde_json::to_string(&r)?);
                continue;
            }
            let paper = r.paper.as_ref().map(|p| format!("{:.2}", p.value)).unwrap_or_else(|| "-".into());
            let v = r.verify.clone().unwrap_or_default();
            let peak = r.peak_rss_mib.map(|m| format!("{m:.0}")).unwrap_or_else(|| "-".into());
            println!(
                "{:<8} {:<10} {:>4} {:>9} {:>12.2} {:>10} {:>6} {:>10.1} {:>12.2} {:>6} {:>11.2} {:>6} {:>9.4} {:>9.4} {:>6} {:>8}",
                r.op,
                r.security,
                r.ring_bits,
                r.n,
                r.online_bytes_per_element,
                paper,
                r.online.rounds,
                r.online.messages_per_party,
                r.offline.bytes_per_party / r.n as f64,
                r.offline.rounds,
                v.bytes_per_party / r.n as f64,
                v.rounds,
                r.seconds.online,
                r.seconds.offline,
                r.pieces,
                peak
            );
        }
    }
    if !json {
        println!(
            "(B/el: mean bytes sent per party per output element; paper: its total bits over the 3 parties / 24, online; verify: the final verification, run before any output)"
        );
    }
    Ok(())
}

/// `veil bench layer --family mm`.
fn mm_layer(model: &str, tokens: usize, layers: usize, json: bool) -> anyhow::Result<()> {
    eprintln!("bench: {layers} {model} layers at {tokens} tokens under mm (client and server) ...");
    let r = veil_bench::mm_layer::bench_layer(model, tokens, layers)?;
    if json {
        println!("{}", serde_json::to_string(&r)?);
        return Ok(());
    }
    let mib = |b: f64| b / f64::from(1u32 << 20);
    println!(
        "mm semi-honest {model}, {layers} layer(s) at {tokens} tokens, client and server over TLS on one machine:"
    );
    println!("  party    MiB sent/layer   s/layer   online MiB   online rounds   embedding MiB");
    for p in &r.parties {
        println!(
            "  {:<7} {:>15.1} {:>9.2} {:>12.1} {:>15} {:>15.2}",
            p.role,
            mib(p.bytes_per_layer),
            p.seconds_per_layer,
            mib(p.online_bytes as f64),
            p.online_rounds,
            mib(p.embedding_bytes as f64)
        );
    }
    for p in &r.parties {
        let ops: Vec<String> =
            p.per_op.iter().map(|(op, b, s)| format!("{op} {:.1} MiB {s:.1} s", mib(*b as f64))).collect();
        println!("  {} by operation: {}", p.role, ops.join(", "));
    }
    println!(
        "  per layer: {:.1} MiB both parties, {:.2} s; session {:.1} s; {} threads; peak memory {} MiB (both parties)",
        r.mib_per_layer_both,
        r.seconds_per_layer,
        r.seconds_total,
        r.cores,
        r.peak_rss_mib.map_or("-".into(), |m| format!("{m:.0}"))
    );
    for p in &r.paper {
        println!("  paper: {} = {:.1} {} ({})", p.source, p.value, p.unit, p.convention);
    }
    Ok(())
}

/// `veil bench gbdt`.
pub fn gbdt(
    data: &str,
    rows: usize,
    (trees, depth, bins): (usize, usize, usize),
    (threads, folds): (usize, usize),
    json: bool,
) -> anyhow::Result<()> {
    let params = veil_mm::gbdt::Params { trees, depth, bins, ..veil_mm::gbdt::Params::default() };
    let csv = std::path::Path::new("data/breast-cancer.csv");
    eprintln!("bench: GBDT under mm on {data}, {trees} trees of depth {depth} ...");
    let r = veil_bench::mm_gbdt::bench_gbdt(data, csv, rows, params, (threads, folds))?;
    if json {
        println!("{}", serde_json::to_string(&r)?);
        return Ok(());
    }
    println!(
        "mm GBDT on {} ({} training rows, {} held out, features {} + {}), {}:",
        r.data, r.train_rows, r.test_rows, r.features[0], r.features[1], r.params
    );
    println!(
        "  F1 held out (mean of {} fold(s)): private {:.4}, clear {:.4} ({} of {trees} trees of the first split as in the clear)",
        r.folds, r.f1_private, r.f1_clear, r.trees_as_clear
    );
    println!(
        "  training: {:.1} MiB P0→P1, {:.1} MiB P1→P0, {} rounds, {:.1} s (setup {:.1} s, prediction {:.1} s), {} thread(s) per party",
        r.train_mib[0], r.train_mib[1], r.train_rounds, r.seconds[1], r.seconds[0], r.seconds[2], r.threads
    );
    for p in &r.paper {
        println!("  paper: {} = {} {} ({})", p.source, p.value, p.unit, p.convention);
    }
    Ok(())
}
