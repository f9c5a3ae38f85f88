//! Tests of the lists, their masks and the vector kernels against the portable paths.
use super::*;

/// The bits by table equal the bits shift by shift, for every width and at the edges.
#[test]
fn bits_by_table_equal_the_bits_one_by_one() {
    let mut g = Prg::new(&Seed([5; 16]));
    for l in 2..=64usize {
        let top = if l == 64 { u64::MAX } else { (1u64 << l) - 1 };
        for m in [0, top, top >> 1, 1u64 << (l - 1), 1, g.next_u64() & top, g.next_u64() & top] {
            let mut want = [0u8; MAX_L];
            for (t, v) in want[..l - 1].iter_mut().enumerate() {
                *v = ((m >> (l - 2 - t)) & 1) as u8;
            }
            assert_eq!(bits_of(m, l), (want, ((m >> (l - 1)) & 1) as u8), "l = {l}, m = {m:#x}");
        }
    }
}

/// A run of elements' masks drawn a group at a time, shuffles side by side, equals the
/// elements drawn one after the other, at every length around the group's, with `Δ`
/// drawn from the stream or given; and the permutations are permutations with their
/// inverses.
#[test]
fn a_stream_of_masks_equals_the_elements_drawn_one_by_one() {
    for (l, n) in [(64, 0), (64, 1), (64, 3), (64, 4), (64, 5), (64, 9), (64, 17), (8, 6), (2, 5)] {
        let seed = Seed([n as u8 + 3; 16]);
        let (mut one, mut many) = (Draws::new(Prg::new(&seed), 127), Draws::new(Prg::new(&seed), 127));
        let alone: Vec<Masks> = (0..n).map(|_| Masks::draw(&mut one, l)).collect();
        let mut stream = MaskStream::new(&mut many, l, n);
        for (e, want) in alone.iter().enumerate() {
            let got = stream.next_masks().expect("one per element");
            assert_eq!(format!("{got:?}"), format!("{want:?}"), "l = {l}, n = {n}, element {e}");
            for t in 0..l {
                assert_eq!(usize::from(got.inverse[usize::from(got.perm[t])]), t);
            }
        }
        assert!(stream.next_masks().is_none(), "no more than n");
        // With the weights from a stream of their own: the same `Δ` and `π` as drawn alone
        // from the first stream without its weights' bytes, the weights in order from the
        // second; and what a prover keeps gives the masks the combinations read again.
        let other = Seed([n as u8 + 40; 16]);
        let (mut main, mut weights) = (Draws::new(Prg::new(&seed), 127), Draws::new(Prg::new(&other), 127));
        let mut stream = MaskStream::split(&mut main, &mut weights, l, n);
        let (mut one, mut w_one) = (Draws::new(Prg::new(&seed), 127), Draws::new(Prg::new(&other), 127));
        let mut w_again = Draws::new(Prg::new(&other), 127);
        for e in 0..n {
            let got = stream.next_masks().expect("one per element").clone();
            let delta = one.below_or_equal(1) as u8;
            let mut js = [0u8; MAX_L];
            let mut want = Masks::blank(delta);
            want.draw_weights(&mut w_one, l);
            let mut bare = Masks::unshuffled(
                &mut one,
                Some(&mut Draws::new(Prg::new(&Seed([0; 16])), 127)),
                l,
                delta,
                &mut js,
            );
            shuffle(std::slice::from_mut(&mut bare), &[js], l);
            (want.perm, want.inverse) = (bare.perm, bare.inverse);
            assert_eq!(format!("{got:?}"), format!("{want:?}"), "l = {l}, n = {n}, element {e}, split");
            let again = Kept::new(&got).masks(&mut w_again, l);
            assert_eq!(
                (again.delta, again.w, again.w2, again.inverse),
                (got.delta, got.w, got.w2, got.inverse)
            );
        }
        assert!(stream.next_masks().is_none(), "no more than n, split");
        let deltas: Vec<u8> = (0..n).map(|e| (e % 3 == 1) as u8).collect();
        let (mut one, mut many) = (Draws::new(Prg::new(&seed), 127), Draws::new(Prg::new(&seed), 127));
        let mut stream = MaskStream::with_deltas(&mut many, l, &deltas);
        for (e, &delta) in deltas.iter().enumerate() {
            let want = Masks::draw_lists(&mut one, l, delta);
            let got = stream.next_masks().expect("one per element");
            assert_eq!(format!("{got:?}"), format!("{want:?}"), "l = {l}, n = {n}, element {e}, given Δ");
        }
    }
}
use crate::prime::prime_for;
use veil_crypto::{Prg, Seed};

/// The vector lists equal the portable ones on random values and at the extremes of every
/// input (the value `M`, the shares, the masks, the share of 1).
#[test]
#[cfg(target_arch = "x86_64")]
fn the_vector_lists_equal_the_portable_ones() {
    let l = MAX_L;
    type Kernel = fn(u64, bool, &[u8], &Masks, &mut [u8], &mut [u8]) -> bool;
    let masks = Masks::draw(&mut Draws::new(Prg::new(&Seed([1; 16])), 127), l);
    let kernels: Vec<Kernel> = [crate::lists_simd::lists as Kernel, crate::lists_simd_avx2::lists]
        .into_iter()
        .filter(|k| k(0, true, &[0; MAX_L - 1], &masks, &mut [0; MAX_L], &mut [0; MAX_L]))
        .collect();
    if kernels.is_empty() {
        eprintln!("skipped: this processor has neither AVX-512 BW nor AVX2 (the portable kernel alone runs)");
        return;
    }
    let mut d = Draws::new(Prg::new(&Seed([7; 16])), 127);
    let mut g = Prg::new(&Seed([8; 16]));
    for trial in 0..4000 {
        let mut mk = Masks::draw(&mut d, l);
        match trial % 9 {
            1 => (mk.w, mk.w2) = ([126; MAX_L], [126; MAX_L]),
            2 => (mk.w, mk.w2) = ([1; MAX_L], [1; MAX_L]),
            _ => {}
        }
        let m = edge_or_random(trial, &mut g);
        let mut shares = [0u8; MAX_L - 1];
        d.fill(&mut shares);
        match trial % 7 {
            0 => shares = [126; MAX_L - 1],
            1 => shares = [0; MAX_L - 1],
            _ => {}
        }
        let first = trial % 2 == 0;
        let (mut u2, mut up2) = ([0u8; MAX_L], [0u8; MAX_L]);
        value_lists(M127, l, m, first, &shares, &mk, &mut u2, &mut up2);
        for kernel in &kernels {
            let (mut u1, mut up1) = ([0u8; MAX_L], [0u8; MAX_L]);
            assert!(kernel(m, first, &shares, &mk, &mut u1, &mut up1));
            assert_eq!((u1, up1), (u2, up2), "trial {trial}");
        }
    }
}

#[test]
fn the_reductions_are_exact_in_their_ranges() {
    fn check(f: impl Reduce) {
        let p = f.p();
        for x in 0..1u32 << 16 {
            assert_eq!(f.red(x), x % p, "{x} mod {p}");
            assert_eq!(u32::from(f.red16(x as u16)), x % p, "{x} mod {p}");
        }
    }
    for p in [13u32, 31, 61, 127, 113, 2, 3] {
        check(Small::new(p));
    }
    check(M127);
}

/// The lists of both parties add up to the paper's lists (one zero of `u` with `u' ≠ 0`
/// exactly when the comparison says so), and a combination of the entries equals
/// `Σ g_s·b_s + h` for random coefficients.
#[test]
fn lists_and_their_weights_match_the_direct_computation() {
    for l in [8usize, 16, 64] {
        let p = prime_for(l as u32);
        let f = Small::new(p);
        let fast = M127;
        let mut d = Draws::new(Prg::new(&Seed([9; 16])), p);
        let mut g = Prg::new(&Seed([1; 16]));
        let half = 1u64 << (l - 1);
        for trial in 0..300 {
            let masks = Masks::draw(&mut d, l);
            let full = if l == 64 { u64::MAX } else { (1u64 << l) - 1 };
            let m = g.next_u64() & full;
            let mut bound = g.next_u64() & (half - 1);
            if trial % 7 == 0 {
                bound = m & (half - 1); // a = b: the appended bits decide
            }
            let bits: Vec<u8> = (0..l - 1).map(|t| ((bound >> (l - 2 - t)) & 1) as u8).collect();
            let mut s1 = vec![0u8; l - 1];
            d.fill(&mut s1);
            let s2: Vec<u8> =
                bits.iter().zip(&s1).map(|(&b, &x)| ((u32::from(b) + p - u32::from(x)) % p) as u8).collect();
            let (mut u1, mut up1, mut u2, mut up2) = (vec![0; l], vec![0; l], vec![0; l], vec![0; l]);
            value_lists(f, l, m, true, &s1, &masks, &mut u1, &mut up1);
            value_lists(f, l, m, false, &s2, &masks, &mut u2, &mut up2);
            if p == 127 {
                let (mut v1, mut vp1) = (vec![0; l], vec![0; l]);
                value_lists(fast, l, m, true, &s1, &masks, &mut v1, &mut vp1);
                assert_eq!((v1, vp1), (u1.clone(), up1.clone()), "the Mersenne reduction agrees");
            }
            let add = |x: &[u8], y: &[u8]| -> Vec<u32> {
                x.iter().zip(y).map(|(&a, &b)| (u32::from(a) + u32::from(b)) % p).collect()
            };
            let (u, up) = (add(&u1, &u2), add(&up1, &up2));
            let hit = (0..l).any(|e| u[e] == 0 && up[e] != 0);
            let m_hat = m & (half - 1);
            let carry = m_hat > bound; // [a > b] with a = M̂‖0, b = B‖1
            let s_m = (m >> (l - 1)) & 1;
            let expected_e = (s_m as u8) ^ u8::from(carry) ^ masks.delta;
            assert_eq!(u8::from(!hit), expected_e, "l = {l}, trial {trial}");
            // The combination through the weights.
            let sigma: Vec<[u8; LANES]> = (0..2 * l).map(|_| std::array::from_fn(|_| d.next())).collect();
            let mut gs = vec![[0u8; LANES]; l - 1];
            let mut h = [0u16; LANES];
            weights(f, l, m, &masks, &sigma, &mut gs, &mut h);
            if p == 127 {
                let (mut gs2, mut h2) = (vec![[0u8; LANES]; l - 1], [0u16; LANES]);
                weights(fast, l, m, &masks, &sigma, &mut gs2, &mut h2);
                assert_eq!((gs2, h2), (gs.clone(), h), "the Mersenne reduction agrees");
            }
            let entries: Vec<u32> = u.iter().chain(&up).copied().collect();
            for j in 0..LANES {
                let direct = entries.iter().zip(&sigma).map(|(&x, s)| x * u32::from(s[j])).sum::<u32>() % p;
                let via = (bits.iter().zip(&gs).map(|(&b, w)| u32::from(b) * u32::from(w[j])).sum::<u32>()
                    + u32::from(h[j]))
                    % p;
                assert_eq!(direct, via, "l = {l}, trial {trial}, key {j}");
            }
            // A prover's MAC combination is the same formula over MAC shares in place of
            // bit shares (here the bits themselves, with κ = 1): `Σ_s g_s·γ_s + h·κ`.
            let mac: Vec<u8> = (0..MAC_KEYS).flat_map(|_| bits.iter().copied()).collect();
            let x = combos(f, l, m, &masks, &mac, &[1; MAC_KEYS], &sigma);
            for (j, &xj) in x.iter().enumerate() {
                let direct = entries.iter().zip(&sigma).map(|(&x, s)| x * u32::from(s[j])).sum::<u32>() % p;
                assert_eq!(xj, direct, "l = {l}, trial {trial}, key {j}");
            }
            assert_eq!(combos_mod(p, l, m, &masks, &mac, &[1; MAC_KEYS], &sigma), x);
        }
    }
}

/// `π` is a permutation, `inverse` its inverse, and the shuffle is the textbook one: swap
/// step by step, then invert in a second pass.
#[test]
fn the_permutation_and_its_inverse_match_a_plain_shuffle() {
    for l in [2usize, 8, 64] {
        let p = prime_for(l as u32);
        let mut d = Draws::new(Prg::new(&Seed([5; 16])), p);
        let mut again = Draws::new(Prg::new(&Seed([5; 16])), p);
        for _ in 0..500 {
            let masks = Masks::draw(&mut d, l);
            // The same stream drawn by hand: Δ, w, w', then the shuffle's 16-bit draws.
            let _delta = again.below_or_equal(1);
            let mut skip = [0u8; 2 * MAX_L];
            again.fill_nonzero(&mut skip[..2 * l]);
            let mut raw = [0u8; 2 * MAX_L];
            again.bytes(&mut raw[..2 * (l - 1)]);
            let mut perm: Vec<u8> = (0..l as u8).collect();
            for (step, k) in (1..l).rev().enumerate() {
                let r = u32::from(raw[2 * step]) | u32::from(raw[2 * step + 1]) << 8;
                perm.swap(k, again.below_or_equal_with(r, k as u32) as usize);
            }
            assert_eq!(&masks.perm[..l], &perm[..]);
            for (e, &t) in perm.iter().enumerate() {
                assert_eq!(usize::from(masks.inverse[usize::from(t)]), e);
            }
        }
    }
}
