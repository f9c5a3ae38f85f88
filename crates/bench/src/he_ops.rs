//! `veil bench ops --family he --op bfv-… [--preset P]`: BFV and the Z_p-OLE beside the M&M
//! paper's Tables IV and VII.
//!
//! - `bfv-ole`: one OLE of `n` slots (default 2^20), as Table VII counts it: P0 holds the key
//!   and sends its queries, P1 answers (flooded, switched down).
//! - `bfv-mul`: `n` share products over Z_p (default 2^21, Table IV), roles switched halfway.
//! - `bfv-encrypt`, `bfv-encrypt-pk`, `bfv-decrypt`, `bfv-mul-plain`, `bfv-add`, `bfv-switch`:
//!   one ciphertext's operation, averaged over repetitions, on one thread.
//!
//! The protocol ops run both parties in this process on threads (`net = "none"`), each on its
//! own pool of `--threads` threads; `setup` is key generation and the exchange of public keys,
//! `online` the OLE. Bytes are split by direction as in the paper.

use std::time::Instant;

use rand_chacha::ChaCha20Rng;
use rand09::{Rng, SeedableRng};
use serde::Serialize;
use veil_he::flood::plan;
use veil_he::ole::Ole;
use veil_he::{Bfv, BfvPreset, wire};
use veil_mpc::{Ctx, MpcError, Result};

use crate::ops::PaperFigure;
use crate::ot_ops::{peak_rss_mib, two_parties_on_threads};
use crate::seal;

/// Ops `veil bench ops --family he` knows.
pub const HE_OPS: &[&str] = &[
    "bfv-ole",
    "bfv-mul",
    "bfv-encrypt",
    "bfv-encrypt-pk",
    "bfv-decrypt",
    "bfv-mul-plain",
    "bfv-add",
    "bfv-switch",
];

const MIB: f64 = (1u64 << 20) as f64;

/// One record of an HE op.
#[derive(Debug, Clone, Serialize)]
pub struct HeRecord {
    /// Always `he`.
    pub family: &'static str,
    /// Always `semi-honest`.
    pub security: &'static str,
    /// Operation.
    pub op: String,
    /// Parameter preset.
    pub preset: &'static str,
    /// `log2 N`, `log2 q`, `log2 t` of the preset.
    pub log_n_q_t: [u32; 3],
    /// Slots (protocol ops) or ciphertexts (single-ciphertext ops: 1).
    pub n: usize,
    /// Threads per party.
    pub threads: usize,
    /// Parties (1 for single-ciphertext ops).
    pub parties: usize,
    /// Bytes P0 → P1 and P1 → P0 per phase `[setup, online]`.
    pub bytes_p0_to_p1: [u64; 2],
    /// See [`Self::bytes_p0_to_p1`].
    pub bytes_p1_to_p0: [u64; 2],
    /// MiB each way in the online phase (the paper's "MB").
    pub mib_online: [f64; 2],
    /// Latency rounds of the online phase.
    pub online_rounds: u64,
    /// Seconds `[setup, online]` (the slower party), or per operation.
    pub seconds: [f64; 2],
    /// Wrong results among the `n` (against Z_t arithmetic).
    pub errors: usize,
    /// Flooding of the answers: `2^flood_bits`, statistical distance `2^−sigma` per answer.
    pub flood_bits: u32,
    /// See [`Self::flood_bits`].
    pub sigma: f64,
    /// Ciphertext primes of the answers.
    pub answer_primes: usize,
    /// Network (`none`: in-memory).
    pub net: &'static str,
    /// The paper's figure.
    pub paper: Option<PaperFigure>,
    /// SEAL's seconds for the same operation in the same run, where seal-python is installed.
    pub seal_seconds: Option<f64>,
    /// Peak resident memory of the process, MiB.
    pub peak_rss_mib: Option<f64>,
}

fn paper(op: &str, preset: BfvPreset) -> Option<PaperFigure> {
    let (value, source) = match (op, preset) {
        ("bfv-ole", BfvPreset::N4096P16) => {
            (0.649, "M&M Table VII (12, 109, 16): 2^20 slots, 15.21 MB queries + 8.20 MB answers")
        }
        ("bfv-ole", BfvPreset::N8192P32) => {
            (0.942, "M&M Table VII (13, 135, 32): 2^20 slots, 19.69 MB queries + 12.45 MB answers")
        }
        ("bfv-ole", BfvPreset::N8192P60) => {
            (0.992, "M&M Table VII (13, 173, 60): 2^20 slots, 23.38 MB queries + 31.05 MB answers")
        }
        ("bfv-mul", BfvPreset::N8192P60) => {
            (1.52, "M&M Table IV \"Ours\": 2^21 share products over p ≈ 2^60, 155.6 MB")
        }
        _ => return None,
    };
    Some(PaperFigure {
        source,
        value,
        unit: "seconds, single thread",
        convention: "SEAL 4.1 with HEXL (AVX-512), ciphertexts compressed with zstd, LAN between two machines",
    })
}

struct PartyRun {
    sent: [u64; 2],
    spans: [(u64, u64); 2],
    seconds: [f64; 2],
    out: Vec<u64>,
}

fn values(tag: u64, n: usize, t: u64) -> Vec<u64> {
    let mut rng = ChaCha20Rng::seed_from_u64(tag);
    (0..n).map(|_| rng.random_range(0..t)).collect()
}

fn run_party(ctx: &mut Ctx, op: &str, preset: BfvPreset, n: usize) -> Result<PartyRun> {
    let (me, mut sent, mut spans, mut seconds) = (ctx.party(), [0u64; 2], [(0, 0); 2], [0f64; 2]);
    ctx.set_phase("setup");
    let (t0, start) = (ctx.stats().time(), Instant::now());
    let ole = Ole::setup(ctx, 1 - me, preset)?;
    sent[0] = ctx.stats().get("setup").bytes_sent;
    spans[0] = (t0, ctx.stats().time());
    seconds[0] = start.elapsed().as_secs_f64();
    let t = ole.modulus();
    let (x, y) = (values(10 + me as u64, n, t), values(20 + me as u64, n, t));
    ctx.set_phase("online");
    let (t0, start) = (ctx.stats().time(), Instant::now());
    let out = match (op, me) {
        ("bfv-ole", 0) => {
            ole.send_queries(ctx, &[&x])?;
            ole.receive_answers(ctx, 1, n)?
        }
        ("bfv-ole", _) => ole.answer(ctx, &[&x])?,
        _ => ole.mul_shares(ctx, &x, &y, me == 0)?,
    };
    sent[1] = ctx.stats().get("online").bytes_sent;
    spans[1] = (t0, ctx.stats().time());
    seconds[1] = start.elapsed().as_secs_f64();
    Ok(PartyRun { sent, spans, seconds, out })
}

fn errors(op: &str, n: usize, t: u64, outs: &[Vec<u64>]) -> usize {
    let mul = |a: u64, b: u64| (u128::from(a) * u128::from(b) % u128::from(t)) as u64;
    let (x0, x1, y0, y1) = (values(10, n, t), values(11, n, t), values(20, n, t), values(21, n, t));
    (0..n)
        .filter(|&i| {
            let got = (outs[0][i] + outs[1][i]) % t;
            let want = match op {
                "bfv-ole" => mul(x0[i], x1[i]),
                _ => mul((x0[i] + x1[i]) % t, (y0[i] + y1[i]) % t),
            };
            got != want
        })
        .count()
}

fn log_n_q_t(bfv: &Bfv) -> [u32; 3] {
    let t = bfv.plaintext_modulus();
    [bfv.slots().trailing_zeros(), bfv.modulus_bits() as u32, 64 - t.leading_zeros()]
}

/// Runs one HE op at `preset`: a protocol op on `n` slots with `threads` threads per party,
/// or a single-ciphertext op.
pub fn he_op(op: &str, preset: BfvPreset, n: Option<usize>, threads: usize) -> Result<HeRecord> {
    if !HE_OPS.contains(&op) {
        return Err(MpcError::Invalid(format!("no HE op '{op}' (available: {})", HE_OPS.join(", "))));
    }
    let bfv = Bfv::new(preset)?;
    let products = if op == "bfv-mul" { 2 } else { 1 };
    let flood = plan(&bfv, products)?;
    let threads = threads.max(1);
    let mut record = HeRecord {
        family: "he",
        security: "semi-honest",
        op: op.to_string(),
        preset: preset.name(),
        log_n_q_t: log_n_q_t(&bfv),
        n: 1,
        threads,
        parties: 1,
        bytes_p0_to_p1: [0; 2],
        bytes_p1_to_p0: [0; 2],
        mib_online: [0.0; 2],
        online_rounds: 0,
        seconds: [0.0; 2],
        errors: 0,
        flood_bits: flood.flood_bits,
        sigma: flood.sigma,
        answer_primes: bfv.levels() - flood.response_level,
        net: "none",
        paper: paper(op, preset),
        seal_seconds: None,
        peak_rss_mib: None,
    };
    if op == "bfv-ole" || op == "bfv-mul" {
        let n = n.unwrap_or(if op == "bfv-ole" { 1 << 20 } else { 1 << 21 });
        let runs = two_parties_on_threads(0x4e, threads, |ctx| run_party(ctx, op, preset, n))?;
        let outs: Vec<Vec<u64>> = runs.iter().map(|r| r.out.clone()).collect();
        record.n = n;
        record.parties = 2;
        record.bytes_p0_to_p1 = runs[0].sent;
        record.bytes_p1_to_p0 = runs[1].sent;
        record.mib_online = [runs[0].sent[1] as f64 / MIB, runs[1].sent[1] as f64 / MIB];
        record.online_rounds = veil_mpc::cost::rounds_across(&[runs[0].spans[1], runs[1].spans[1]]);
        record.seconds = std::array::from_fn(|i| runs.iter().map(|r| r.seconds[i]).fold(0.0, f64::max));
        record.errors = errors(op, n, bfv.plaintext_modulus(), &outs);
        if op == "bfv-ole" {
            let switches = flood.response_level;
            record.seal_seconds = seal::seconds(
                &bfv,
                serde_json::json!({"mode": "ole", "slots": n, "answer_switches": switches}),
            );
        }
    } else {
        // On a pool of `threads` (as the CKKS ops): outside one, each limb loop would hand its
        // work to the global pool's threads and wait.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| MpcError::Invalid(format!("thread pool: {e}")))?;
        let (seconds, bytes) = pool.install(|| single(op, &bfv))?;
        record.seconds = [0.0, seconds];
        record.bytes_p0_to_p1 = [0, bytes as u64];
        record.seal_seconds =
            seal::seconds(&bfv, serde_json::json!({"mode": "time", "op": op, "reps": SINGLE_REPS}));
    }
    record.peak_rss_mib = peak_rss_mib();
    Ok(record)
}

/// Runs of each single-ciphertext BFV operation, here and in SEAL's script: the median of 100
/// (20 left the sub-millisecond ones moving by up to 2× between runs on a busy machine).
const SINGLE_REPS: usize = 100;

/// Seconds per operation on one ciphertext (the median of repeated runs) and the bytes of the
/// ciphertext it yields.
fn single(op: &str, bfv: &Bfv) -> Result<(f64, usize)> {
    let mut rng = ChaCha20Rng::seed_from_u64(0x5e);
    let t = bfv.plaintext_modulus();
    let (sk, pk) = bfv.keygen(&mut rng)?;
    let vals: Vec<u64> = (0..bfv.slots()).map(|_| rng.random_range(0..t)).collect();
    let pt = bfv.encode(&vals)?;
    let ct = bfv.encrypt_public(&pk, &pt, None, &mut rng)?;
    let operand = bfv.operand(&pt, 0)?;
    let reps = SINGLE_REPS;
    let mut times = Vec::with_capacity(reps);
    let mut bytes = 0;
    for _ in 0..reps {
        let start = Instant::now();
        let out = match op {
            "bfv-encrypt" => bfv.encrypt_secret(&sk, &pt, 0, &mut rng)?,
            "bfv-encrypt-pk" => bfv.encrypt_public(&pk, &pt, None, &mut rng)?,
            "bfv-decrypt" => {
                std::hint::black_box(bfv.decrypt(&sk, &ct)?);
                ct.clone()
            }
            "bfv-mul-plain" => bfv.mul_plain(&ct, &operand),
            "bfv-add" => bfv.add(&ct, &ct)?,
            _ => {
                let mut c = ct.clone();
                bfv.switch_to(&mut c, 1)?;
                c
            }
        };
        times.push(start.elapsed().as_secs_f64());
        let form = if out.is_seeded() { wire::Form::Seeded } else { wire::Form::Full };
        bytes = wire::ciphertext_bytes(bfv, out.level(), form)?;
    }
    times.sort_by(f64::total_cmp);
    Ok((times[reps / 2], bytes))
}

/// CKKS ops `veil bench ops --family he` knows (single ciphertext, one thread).
pub const CKKS_OPS: &[&str] = &[
    "ckks-encrypt",
    "ckks-encrypt-sk",
    "ckks-decrypt",
    "ckks-add",
    "ckks-mul-plain",
    "ckks-mul-relin",
    "ckks-rescale",
    "ckks-rotate",
    "ckks-hoisted",
    "ckks-conjugate",
    "ckks-matmul",
];

/// One record of a CKKS op.
#[derive(Debug, Clone, Serialize)]
pub struct CkksRecord {
    /// Always `he`.
    pub family: &'static str,
    /// Operation (`ckks-hoisted`: sixteen rotations, by 1 … 16, of one ciphertext).
    pub op: String,
    /// Parameter preset.
    pub preset: &'static str,
    /// `log2 N`.
    pub log_n: u32,
    /// Bits of the primes, the special one last.
    pub chain_bits: Vec<usize>,
    /// `log2 Δ`.
    pub scale_bits: u32,
    /// Threads the operation ran on (SEAL's figure: one thread).
    pub threads: usize,
    /// Median seconds of one operation at the top level.
    pub seconds: f64,
    /// SEAL's median seconds for the same operation on the same chain, same run.
    pub seal_seconds: Option<f64>,
    /// Bytes of a fresh ciphertext, a public key, the relinearisation key and one Galois key
    /// (seeded halves travel as 32-byte seeds).
    pub bytes: CkksSizes,
    /// Peak resident memory of the process, MiB.
    pub peak_rss_mib: Option<f64>,
}

/// Key and ciphertext sizes.
#[derive(Debug, Clone, Serialize)]
pub struct CkksSizes {
    /// A fresh ciphertext.
    pub ciphertext: usize,
    /// The public key.
    pub public_key: usize,
    /// The relinearisation key.
    pub relin_key: usize,
    /// One Galois key.
    pub galois_key: usize,
}

/// Runs one CKKS op at `preset` on a pool of `threads` threads (the limbs of one operation
/// spread over them).
pub fn ckks_op(op: &str, preset: veil_he::ckks::CkksPreset, threads: usize) -> Result<CkksRecord> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .build()
        .map_err(|e| MpcError::Invalid(format!("thread pool: {e}")))?;
    let mut record = pool.install(|| ckks_op_here(op, preset))?;
    record.threads = threads.max(1);
    Ok(record)
}

fn ckks_op_here(op: &str, preset: veil_he::ckks::CkksPreset) -> Result<CkksRecord> {
    use veil_he::ckks::Ckks;
    if !CKKS_OPS.contains(&op) || op == "ckks-matmul" {
        return Err(MpcError::Invalid(format!("no CKKS op '{op}' (available: {})", CKKS_OPS.join(", "))));
    }
    let ckks = Ckks::new(preset)?;
    let mut rng = ChaCha20Rng::seed_from_u64(0xc4);
    let (sk, pk) = ckks.keygen(&mut rng)?;
    let rk = ckks.relin_key(&sk, &mut rng)?;
    let rotations: Vec<i64> = (1..=16).collect();
    let gk = if matches!(op, "ckks-rotate" | "ckks-hoisted" | "ckks-conjugate") {
        ckks.galois_keys(&sk, &rotations, true, &mut rng)?
    } else {
        Default::default()
    };
    let values: Vec<f64> = (0..ckks.slots()).map(|_| rng.random_range(-1.0..1.0)).collect();
    let pt = ckks.encode(&values, ckks.default_scale(), ckks.top_level())?;
    let ct = ckks.encrypt(&pk, &pt, &mut rng)?;
    let reps = if preset.degree() >= 32768 { 5 } else { 10 };
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        let start = Instant::now();
        match op {
            "ckks-encrypt" => drop(std::hint::black_box(ckks.encrypt(&pk, &pt, &mut rng)?)),
            "ckks-encrypt-sk" => drop(std::hint::black_box(ckks.encrypt_secret(&sk, &pt, &mut rng)?)),
            "ckks-decrypt" => drop(std::hint::black_box(ckks.decrypt_values(&sk, &ct)?)),
            "ckks-add" => drop(std::hint::black_box(ckks.add(&ct, &ct)?)),
            "ckks-mul-plain" => drop(std::hint::black_box(ckks.mul_plain(&ct, &pt)?)),
            "ckks-mul-relin" => drop(std::hint::black_box(ckks.mul_relin(&ct, &ct, &rk)?)),
            "ckks-rescale" => drop(std::hint::black_box(ckks.rescale(&ct)?)),
            "ckks-rotate" => drop(std::hint::black_box(ckks.rotate(&ct, 1, &gk)?)),
            "ckks-hoisted" => drop(std::hint::black_box(ckks.rotate_hoisted(&ct, &rotations, &gk)?)),
            _ => drop(std::hint::black_box(ckks.conjugate(&ct, &gk)?)),
        }
        times.push(start.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    let (ciphertext, public_key, switching) = ckks.sizes();
    let chain: Vec<u64> = (0..ckks.ring().primes().len()).map(|i| ckks.ring().modulus(i)).collect();
    let seal_seconds = seal::seconds_ckks(
        serde_json::json!({"mode": "ckks-time", "op": op, "n": preset.degree(), "chain": chain, "scale": ckks.default_scale(), "reps": reps}),
    );
    Ok(CkksRecord {
        family: "he",
        op: op.to_string(),
        preset: preset.name(),
        log_n: preset.degree().trailing_zeros(),
        chain_bits: preset.chain_bits().to_vec(),
        scale_bits: preset.scale_bits(),
        threads: 1,
        seconds: times[reps / 2],
        seal_seconds,
        bytes: CkksSizes { ciphertext, public_key, relin_key: switching, galois_key: switching },
        peak_rss_mib: peak_rss_mib(),
    })
}

/// One record of `ckks-matmul`: `X·W` under CKKS in spatial-first packing, BSGS diagonals
/// encoded as they are used.
#[derive(Debug, Clone, Serialize)]
pub struct MatmulRecord {
    /// Always `he`.
    pub family: &'static str,
    /// Always `ckks-matmul`.
    pub op: &'static str,
    /// Parameter preset.
    pub preset: &'static str,
    /// `[rows, inner, cols]`: `X` is rows × inner, `W` inner × cols.
    pub shape: [usize; 3],
    /// Level of the inputs (primes − 1).
    pub level: usize,
    /// Threads.
    pub threads: usize,
    /// Seconds of the product (diagonals encoded inside), then one rescale per output.
    pub seconds: f64,
    /// Rotations (hoisted baby steps + giant steps) and plaintext products.
    pub rotations: usize,
    /// See [`Self::rotations`].
    pub plaintext_products: usize,
    /// Input ciphertexts and their bytes; output ciphertexts (rescaled) and their bytes.
    pub inputs: [usize; 2],
    /// See [`Self::inputs`].
    pub outputs: [usize; 2],
    /// Bytes of the Galois keys the product needs.
    pub galois_key_bytes: usize,
    /// Largest error against the plaintext product (inputs in [−1, 1], weights in [−0.05, 0.05]).
    pub max_error: f64,
    /// Peak resident memory of the process, MiB.
    pub peak_rss_mib: Option<f64>,
}

/// The BERT-base projection by default: `X` 128 × 768 by `W` 768 × 768.
pub fn ckks_matmul(
    preset: veil_he::ckks::CkksPreset,
    shape: [usize; 3],
    threads: usize,
) -> Result<MatmulRecord> {
    use veil_he::ckks::linalg::{MatmulPlan, matmul_streaming, pack, unpack};
    use veil_he::ckks::{Ckks, wire};
    let ckks = Ckks::new(preset)?;
    let [rows, inner, cols] = shape;
    let plan = MatmulPlan::new(rows, inner, cols, ckks.slots())?;
    let mut rng = ChaCha20Rng::seed_from_u64(0x3a);
    let (sk, pk) = ckks.keygen(&mut rng)?;
    let gk = ckks.galois_keys(&sk, &plan.rotations(), false, &mut rng)?;
    let x: Vec<f64> = (0..rows * inner).map(|_| rng.random_range(-1.0..1.0)).collect();
    let w: Vec<f64> = (0..inner * cols).map(|_| rng.random_range(-0.05..0.05)).collect();
    let level = 1.min(ckks.top_level());
    let cts = pack(&plan, &x)?
        .iter()
        .map(|v| ckks.encrypt(&pk, &ckks.encode(v, ckks.default_scale(), ckks.top_level())?, &mut rng))
        .map(|ct| ckks.drop_to_level(&ct?, level))
        .collect::<Result<Vec<_>>>()?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .build()
        .map_err(|e| MpcError::Invalid(format!("thread pool: {e}")))?;
    let start = Instant::now();
    let out = pool.install(|| -> Result<Vec<_>> {
        let scale = ckks.ring().modulus(level) as f64;
        let prod = matmul_streaming(&ckks, &plan, &cts, &w, scale, &gk)?;
        prod.iter().map(|c| ckks.rescale(c)).collect()
    })?;
    let seconds = start.elapsed().as_secs_f64();
    let slots: Vec<Vec<f64>> = out
        .iter()
        .map(|ct| Ok(ckks.decrypt_values(&sk, ct)?.iter().map(|z| z.re).collect()))
        .collect::<Result<_>>()?;
    let got = unpack(&plan, &slots)?;
    let mut max_error = 0f64;
    for l in 0..rows {
        for j in 0..cols {
            let want: f64 = (0..inner).map(|d| x[l * inner + d] * w[d * cols + j]).sum();
            max_error = max_error.max((got[l * cols + j] - want).abs());
        }
    }
    let bytes = |c: &veil_he::ckks::Ciphertext| wire::encode_ciphertext(&ckks, c).len();
    Ok(MatmulRecord {
        family: "he",
        op: "ckks-matmul",
        preset: preset.name(),
        shape,
        level,
        threads,
        seconds,
        rotations: plan.rotation_count(),
        plaintext_products: plan.plaintext_products(),
        inputs: [cts.len(), cts.iter().map(bytes).sum()],
        outputs: [out.len(), out.iter().map(bytes).sum()],
        galois_key_bytes: wire::encode_galois_keys(&ckks, &gk).len(),
        max_error,
        peak_rss_mib: peak_rss_mib(),
    })
}
