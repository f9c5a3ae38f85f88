//! OT extension: IKNP (Ishai, Kilian, Nissim, Petrank, "Extending Oblivious Transfers
//! Efficiently") and its maliciously secure form KOS (Keller, Orsini, Scholl, "Actively Secure
//! OT Extension with Optimal Overhead"), turning 128 base OTs into any number of random COTs.
//!
//! Roles swap for the base OTs: the COT sender picks Δ and receives, as base-OT receiver with
//! the bits of Δ as choices, one of each pair of column seeds `(k_j^0, k_j^1)` that the COT
//! receiver sent. For `m` rows (a multiple of 128):
//!
//! ```text
//! R: r ←$ {0,1}^m;  t^j = G(k_j^0);  u^j = t^j ⊕ G(k_j^1) ⊕ r     R → S: u^1 … u^128
//! S: q^j = G(k_j^{Δ_j}) ⊕ Δ_j·u^j = t^j ⊕ Δ_j·r
//! transposed, row i: q_i = t_i ⊕ r_i·Δ
//! ```
//!
//! so the sender keeps `v_i = q_i` and the receiver `w_i = t_i`: `m` COTs for `128·m` bits sent.
//!
//! **KOS check** (malicious receiver). A receiver that uses different `r` in different
//! columns would learn bits of Δ. After `u` arrives the sender sends a fresh seed; both expand
//! it to χ_1 … χ_m ∈ GF(2^128); the receiver answers `x = Σ r_i·χ_i` and `t = Σ t_i·χ_i`; the
//! sender checks `Σ q_i·χ_i = t ⊕ x·Δ` and aborts otherwise. 256 extra random rows (more than
//! the κ + s = 128 + 64 the paper asks for) are extended and dropped, so `x` and `t` reveal
//! nothing of the rows that are kept. Without the check (`Check::None`) this is IKNP, secure
//! against semi-honest parties. Against a malicious sender both are secure as they stand: the
//! sender sees only `u`, masked by the PRG streams it does not know.
//!
//! Rows are extended in chunks of at most [`CHUNK_ROWS`] so a message stays a few MiB.

use rayon::prelude::*;
use veil_crypto::{Domain, Prg, Seed};
use veil_mpc::{Ctx, MpcError, PartyId, Result};
use zerocopy::IntoBytes;

use crate::block::{self, Block, clmul, gf_mul, reduce, transpose_columns};
use crate::cot::{self, CotReceiver, CotSender, Maker, Stock, normalize};
use crate::{base, io};

/// Rows extended per message: 2^18 rows, a 4 MiB message.
pub const CHUNK_ROWS: usize = 1 << 18;
/// Extra rows per chunk that the KOS check consumes.
pub const KOS_EXTRA_ROWS: usize = 256;

const STEP_U: &str = "OT extension: column matrix";
const STEP_SEED: &str = "KOS check: challenge seed";
const STEP_PROOF: &str = "KOS check: receiver's answer";

/// Whether the receiver's consistency is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// IKNP: semi-honest parties.
    None,
    /// KOS: a malicious receiver is caught.
    Kos,
}

fn column_prg(ctx: &Ctx, key: Block, column: usize) -> Prg {
    Prg::derive(
        &Seed(key.to_le_bytes()),
        &Domain::new(ctx.session(), "veil/ot/extension/column", column as u64),
    )
}

fn fill_columns(prgs: &mut [Prg], words: usize) -> Vec<Block> {
    let mut cols = vec![0u128; 128 * words];
    prgs.par_iter_mut()
        .zip(cols.par_chunks_mut(words))
        .for_each(|(prg, col)| prg.fill_bytes(col.as_mut_bytes()));
    cols
}

fn challenges(seed: Block, m: usize) -> Vec<Block> {
    let mut prg = Prg::new(&Seed(seed.to_le_bytes()));
    let mut chi = vec![0u128; m];
    prg.fill_bytes(chi.as_mut_bytes());
    chi
}

/// `Σ χ_i·x_i` in GF(2^128) (one reduction at the end: the sum of products is linear).
fn inner_product(chi: &[Block], xs: &[Block]) -> Block {
    let (lo, hi) =
        chi.par_iter().zip(xs).map(|(&c, &x)| clmul(c, x)).reduce(|| (0, 0), |a, b| (a.0 ^ b.0, a.1 ^ b.1));
    reduce(lo, hi)
}

/// The COT sender of IKNP/KOS.
pub struct ExtensionSender {
    peer: PartyId,
    delta: Block,
    check: Check,
    columns: Vec<Prg>,
    stock: Stock,
}

impl std::fmt::Debug for ExtensionSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtensionSender")
            .field("peer", &self.peer)
            .field("check", &self.check)
            .finish_non_exhaustive()
    }
}

impl ExtensionSender {
    /// Runs the base OTs with `peer` for a fresh random Δ.
    pub fn setup(ctx: &mut Ctx, peer: PartyId, check: Check) -> Result<Self> {
        let mut bytes = [0u8; 16];
        ctx.rng().fill_bytes(&mut bytes);
        Self::setup_with_delta(ctx, peer, check, u128::from_le_bytes(bytes))
    }

    /// Runs the base OTs with `peer` for the given Δ (its least significant bit is set).
    pub fn setup_with_delta(ctx: &mut Ctx, peer: PartyId, check: Check, delta: Block) -> Result<Self> {
        let delta = delta | 1;
        let choices: Vec<bool> = (0..128).map(|j| delta >> j & 1 == 1).collect();
        let keys = base::receive(ctx, peer, &choices)?;
        let columns = keys.iter().enumerate().map(|(j, &k)| column_prg(ctx, k, j)).collect();
        Ok(ExtensionSender { peer, delta, check, columns, stock: Stock::default() })
    }

    fn chunk(&mut self, ctx: &mut Ctx, n: usize) -> Result<Vec<Block>> {
        let extra = if self.check == Check::Kos { KOS_EXTRA_ROWS } else { 0 };
        let m = n.div_ceil(128) * 128 + extra;
        let words = m / 128;
        let u = io::recv_blocks(ctx, self.peer, 128 * words, STEP_U)?;
        let mut q = fill_columns(&mut self.columns, words);
        for j in 0..128 {
            let mask = block::select(self.delta >> j & 1 == 1, u128::MAX);
            for (qw, uw) in q[j * words..(j + 1) * words].iter_mut().zip(&u[j * words..(j + 1) * words]) {
                *qw ^= uw & mask;
            }
        }
        let mut rows = transpose_columns(&q, words);
        if self.check == Check::Kos {
            let mut seed = [0u8; 16];
            ctx.rng().fill_bytes(&mut seed);
            let seed = u128::from_le_bytes(seed);
            io::send_blocks(ctx, self.peer, &[seed])?;
            let answer = io::recv_blocks(ctx, self.peer, 2, STEP_PROOF)?;
            let chi = challenges(seed, m);
            let expected = inner_product(&chi, &rows) ^ gf_mul(answer[0], self.delta);
            if expected != answer[1] {
                return Err(MpcError::abort("KOS consistency check of OT extension", Some(self.peer)));
            }
        }
        rows.truncate(n);
        normalize(self.delta, &mut rows);
        Ok(rows)
    }
}

impl Maker for ExtensionSender {
    fn stock(&mut self) -> &mut Stock {
        &mut self.stock
    }

    fn make(&mut self, ctx: &mut Ctx, ready: &mut Vec<Block>, want: usize) -> Result<()> {
        ready.extend(self.chunk(ctx, want.min(CHUNK_ROWS))?);
        Ok(())
    }
}

impl CotSender for ExtensionSender {
    fn peer(&self) -> PartyId {
        self.peer
    }

    fn delta(&self) -> Block {
        self.delta
    }

    fn send_random(&mut self, ctx: &mut Ctx, n: usize) -> Result<Vec<Block>> {
        cot::draw(self, ctx, n)
    }

    fn prepare(&mut self, ctx: &mut Ctx, n: usize) -> Result<()> {
        cot::prepare(self, ctx, n)
    }

    fn prepared(&self) -> usize {
        self.stock.len()
    }

    fn consumed(&self) -> u64 {
        self.stock.consumed()
    }

    fn made_on_demand(&self) -> u64 {
        self.stock.on_demand()
    }
}

/// The COT receiver of IKNP/KOS.
pub struct ExtensionReceiver {
    peer: PartyId,
    check: Check,
    columns: Vec<(Prg, Prg)>,
    stock: Stock,
}

impl std::fmt::Debug for ExtensionReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtensionReceiver")
            .field("peer", &self.peer)
            .field("check", &self.check)
            .finish_non_exhaustive()
    }
}

impl ExtensionReceiver {
    /// Runs the base OTs with `peer` (as base-OT sender).
    pub fn setup(ctx: &mut Ctx, peer: PartyId, check: Check) -> Result<Self> {
        let keys = base::send(ctx, peer, 128)?;
        let columns = keys
            .iter()
            .enumerate()
            .map(|(j, &(k0, k1))| (column_prg(ctx, k0, j), column_prg(ctx, k1, j)))
            .collect();
        Ok(ExtensionReceiver { peer, check, columns, stock: Stock::default() })
    }

    fn chunk(&mut self, ctx: &mut Ctx, n: usize) -> Result<Vec<Block>> {
        let extra = if self.check == Check::Kos { KOS_EXTRA_ROWS } else { 0 };
        let m = n.div_ceil(128) * 128 + extra;
        let words = m / 128;
        let mut r = vec![0u128; words];
        ctx.rng().fill_bytes(r.as_mut_bytes());
        let (mut zeros, mut ones): (Vec<Prg>, Vec<Prg>) =
            std::mem::take(&mut self.columns).into_iter().unzip();
        let t = fill_columns(&mut zeros, words);
        let mut u = fill_columns(&mut ones, words);
        self.columns = zeros.into_iter().zip(ones).collect();
        for (j, col) in u.chunks_mut(words).enumerate() {
            for ((uw, tw), rw) in col.iter_mut().zip(&t[j * words..(j + 1) * words]).zip(&r) {
                *uw ^= tw ^ rw;
            }
        }
        io::send_blocks(ctx, self.peer, &u)?;
        let mut rows = transpose_columns(&t, words);
        if self.check == Check::Kos {
            let seed = io::recv_blocks(ctx, self.peer, 1, STEP_SEED)?[0];
            let chi = challenges(seed, m);
            let x = chi
                .iter()
                .enumerate()
                .fold(0u128, |acc, (i, &c)| acc ^ block::select(r[i / 128] >> (i % 128) & 1 == 1, c));
            let t_sum = inner_product(&chi, &rows);
            io::send_blocks(ctx, self.peer, &[x, t_sum])?;
        }
        rows.truncate(n);
        Ok(rows)
    }
}

impl Maker for ExtensionReceiver {
    fn stock(&mut self) -> &mut Stock {
        &mut self.stock
    }

    fn make(&mut self, ctx: &mut Ctx, ready: &mut Vec<Block>, want: usize) -> Result<()> {
        ready.extend(self.chunk(ctx, want.min(CHUNK_ROWS))?);
        Ok(())
    }
}

impl CotReceiver for ExtensionReceiver {
    fn peer(&self) -> PartyId {
        self.peer
    }

    fn receive_random(&mut self, ctx: &mut Ctx, n: usize) -> Result<Vec<Block>> {
        cot::draw(self, ctx, n)
    }

    fn prepare(&mut self, ctx: &mut Ctx, n: usize) -> Result<()> {
        cot::prepare(self, ctx, n)
    }

    fn prepared(&self) -> usize {
        self.stock.len()
    }

    fn consumed(&self) -> u64 {
        self.stock.consumed()
    }

    fn made_on_demand(&self) -> u64 {
        self.stock.on_demand()
    }
}
