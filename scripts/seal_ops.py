"""SEAL's side of Veil's HE benchmarks and differential tests (seal-python, Microsoft SEAL 4.x).

Reads one JSON request on stdin, prints one JSON answer on stdout. The parameters are Veil's
own: ring degree `n`, plaintext modulus `t` and the ciphertext primes `primes` (SEAL adds one
more 60-bit prime as its special prime, which fresh ciphertexts do not carry, so that
ciphertexts of both libraries have the same primes; the security check is off for that reason
only: the ciphertext modulus is Veil's).

Requests:
  {"mode": "time", "op": "bfv-encrypt" | ..., "reps": 20, ...}  -> {"seconds": median}
  {"mode": "ole", "slots": 1048576, ...}   -> {"seconds": ...}  (Table VII's OLE, one thread,
      no network: queries encrypted and saved, answers computed, saved, loaded and decrypted)
  {"mode": "eval", "a": [...], "b": [...], "c": [...], ...}
      -> {"fresh": a, "product": a*b + c, "switched": the same after one modulus switch}
  {"mode": "ckks-time", "op": "ckks-…", "n": N, "chain": [...], "scale": Δ}  -> {"seconds": median}
  {"mode": "ckks-circuit", "x": [...], "y": ..., "z": ..., "w": ..., ...}
      -> {"log2_error": largest slot error of (((x·y)·z)·w)², log2; "log2_rms": its RMS, log2}
"""

import json
import statistics
import sys
import time

try:
    import numpy as np
    import seal
except ImportError:
    print(json.dumps({"error": "seal-python is not installed (pip install seal-python)"}))
    sys.exit(3)


def is_prime(n):
    if n < 2:
        return False
    small = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37]
    for p in small:
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1
    for a in small:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def special_prime(n, taken):
    c = (1 << 60) - 1
    c -= (c - 1) % (2 * n)
    while not is_prime(c) or c in taken:
        c -= 2 * n
    return c


class Bfv:
    def __init__(self, req):
        n, t, primes = req["n"], req["t"], req["primes"]
        parms = seal.EncryptionParameters(seal.scheme_type.bfv)
        parms.set_poly_modulus_degree(n)
        chain = primes + [special_prime(n, primes + [t])]
        parms.set_coeff_modulus([seal.Modulus(q) for q in chain])
        parms.set_plain_modulus(seal.Modulus(t))
        self.ctx = seal.SEALContext(parms, True, seal.sec_level_type.none)
        if self.ctx.parameter_error_message() != "valid":
            raise SystemExit(json.dumps({"error": self.ctx.parameter_error_message()}))
        keys = seal.KeyGenerator(self.ctx)
        self.sk, self.pk = keys.secret_key(), keys.create_public_key()
        self.enc = seal.Encryptor(self.ctx, self.pk)
        self.enc.set_secret_key(self.sk)
        self.dec = seal.Decryptor(self.ctx, self.sk)
        self.ev = seal.Evaluator(self.ctx)
        self.batch = seal.BatchEncoder(self.ctx)
        self.n, self.t = n, t

    def encode(self, values):
        return self.batch.encode(np.array(values, dtype=np.uint64))


class Ckks:
    """CKKS on Veil's chain (its last prime is the special prime in both libraries)."""

    def __init__(self, req):
        n, chain = req["n"], req["chain"]
        parms = seal.EncryptionParameters(seal.scheme_type.ckks)
        parms.set_poly_modulus_degree(n)
        parms.set_coeff_modulus([seal.Modulus(q) for q in chain])
        self.ctx = seal.SEALContext(parms, True, seal.sec_level_type.none)
        if self.ctx.parameter_error_message() != "valid":
            raise SystemExit(json.dumps({"error": self.ctx.parameter_error_message()}))
        self.keys = seal.KeyGenerator(self.ctx)
        self.sk, self.pk = self.keys.secret_key(), self.keys.create_public_key()
        self.rk = self.keys.create_relin_keys()
        self.enc = seal.Encryptor(self.ctx, self.pk)
        self.enc.set_secret_key(self.sk)
        self.dec = seal.Decryptor(self.ctx, self.sk)
        self.ev = seal.Evaluator(self.ctx)
        self.coder = seal.CKKSEncoder(self.ctx)
        self.n, self.scale = n, req["scale"]

    def encode(self, values, scale=None):
        return self.coder.encode(np.array(values, dtype=np.float64), self.scale if scale is None else scale)

    def last_prime(self, ct):
        return self.ctx.get_context_data(ct.parms_id()).parms().coeff_modulus()[-1].value()


def ckks_time(c, op, reps):
    values = [((i * 7919) % 2001 - 1000) / 1000.0 for i in range(c.n // 2)]
    pt = c.encode(values)
    ct = c.enc.encrypt(pt)
    gk = seal.GaloisKeys()
    if op in ("ckks-rotate", "ckks-hoisted"):
        c.keys.create_galois_keys(list(range(1, 17)), gk)
    elif op == "ckks-conjugate":
        c.keys.create_galois_keys(gk)
    ops = {
        "ckks-encrypt": lambda: c.enc.encrypt(pt),
        "ckks-encrypt-sk": lambda: c.enc.encrypt_symmetric(pt),
        "ckks-decrypt": lambda: c.coder.decode(c.dec.decrypt(ct)),
        "ckks-add": lambda: c.ev.add(ct, ct),
        "ckks-mul-plain": lambda: c.ev.multiply_plain(ct, pt),
        "ckks-mul-relin": lambda: c.ev.relinearize(c.ev.multiply(ct, ct), c.rk),
        "ckks-rescale": lambda: c.ev.rescale_to_next(ct),
        "ckks-rotate": lambda: c.ev.rotate_vector(ct, 1, gk),
        # SEAL's API has no hoisting: sixteen rotations one by one.
        "ckks-hoisted": lambda: [c.ev.rotate_vector(ct, k, gk) for k in range(1, 17)],
        "ckks-conjugate": lambda: c.ev.complex_conjugate(ct, gk),
    }
    if op not in ops:
        raise SystemExit(json.dumps({"error": f"no SEAL counterpart for {op}"}))
    return median_seconds(ops[op], reps)


def ckks_circuit(c, req):
    """(((x·y)·z)·w)², as Veil's test computes it; the largest and the RMS slot error, log2."""
    x, y, z, w = (req[k] for k in "xyzw")
    enc = lambda v: c.enc.encrypt(c.encode(v))
    ct = c.ev.relinearize(c.ev.multiply(enc(x), enc(y)), c.rk)
    c.ev.rescale_to_next_inplace(ct)
    cz = enc(z)
    c.ev.mod_switch_to_inplace(cz, ct.parms_id())
    ct = c.ev.relinearize(c.ev.multiply(ct, cz), c.rk)
    c.ev.rescale_to_next_inplace(ct)
    pw = c.encode(w, float(c.last_prime(ct)))
    c.ev.mod_switch_to_inplace(pw, ct.parms_id())
    ct = c.ev.multiply_plain(ct, pw)
    c.ev.rescale_to_next_inplace(ct)
    ct = c.ev.relinearize(c.ev.square(ct), c.rk)
    c.ev.rescale_to_next_inplace(ct)
    got = c.coder.decode(c.dec.decrypt(ct))
    want = [(a * b * d * e) ** 2 for a, b, d, e in zip(x, y, z, w)]
    errs = [abs(g - v) for g, v in zip(got, want)]
    rms = (sum(e * e for e in errs) / len(errs)) ** 0.5
    return {"log2_error": float(np.log2(max(errs))), "log2_rms": float(np.log2(rms))}


def median_seconds(f, reps):
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def time_op(b, op, reps):
    values = [(i * 7919) % b.t for i in range(b.n)]
    pt = b.encode(values)
    ct = b.enc.encrypt(pt)
    ops = {
        "bfv-encrypt": lambda: b.enc.encrypt_symmetric(pt),
        "bfv-encrypt-pk": lambda: b.enc.encrypt(pt),
        "bfv-decrypt": lambda: b.batch.decode(b.dec.decrypt(ct)),
        "bfv-mul-plain": lambda: b.ev.multiply_plain(ct, pt),
        "bfv-add": lambda: b.ev.add(ct, ct),
        "bfv-switch": lambda: b.ev.mod_switch_to_next(ct),
    }
    if op not in ops:
        raise SystemExit(json.dumps({"error": f"no SEAL counterpart for {op}"}))
    return median_seconds(ops[op], reps)


def ole(b, slots, answer_switches):
    cts = (slots + b.n - 1) // b.n
    x = [[(i * 31 + c) % b.t for i in range(b.n)] for c in range(cts)]
    a = [[(i * 17 + 3 * c) % b.t for i in range(b.n)] for c in range(cts)]
    u = [[(i * 13 + 5 * c) % b.t for i in range(b.n)] for c in range(cts)]
    start = time.perf_counter()
    queries = [b.enc.encrypt_symmetric(b.encode(v)).to_string() for v in x]
    answers = []
    for q, av, uv in zip(queries, a, u):
        ct = seal.Ciphertext()
        ct.load_bytes(b.ctx, q)
        prod = b.ev.multiply_plain(ct, b.encode(av))
        neg = b.enc.encrypt(b.encode([(b.t - v) % b.t for v in uv]))
        out = b.ev.add(prod, neg)
        for _ in range(answer_switches):
            b.ev.mod_switch_to_next_inplace(out)
        answers.append(out.to_string())
    for s in answers:
        ct = seal.Ciphertext()
        ct.load_bytes(b.ctx, s)
        b.batch.decode(b.dec.decrypt(ct))
    return time.perf_counter() - start


def evaluate(b, req):
    a, bv, c = req["a"], req["b"], req["c"]
    ct = b.enc.encrypt(b.encode(a))
    fresh = list(b.batch.decode(b.dec.decrypt(ct)))
    prod = b.ev.add_plain(b.ev.multiply_plain(ct, b.encode(bv)), b.encode(c))
    product = list(b.batch.decode(b.dec.decrypt(prod)))
    b.ev.mod_switch_to_next_inplace(prod)
    switched = list(b.batch.decode(b.dec.decrypt(prod)))
    # decode() gives the centred (signed) representatives.
    def lift(vs):
        return [int(v) % b.t for v in vs]

    return {"fresh": lift(fresh), "product": lift(product), "switched": lift(switched)}


def main():
    req = json.load(sys.stdin)
    mode = req.get("mode", "time")
    if mode.startswith("ckks"):
        c = Ckks(req)
        if mode == "ckks-time":
            out = {"seconds": ckks_time(c, req["op"], req.get("reps", 10))}
        else:
            out = ckks_circuit(c, req)
        print(json.dumps(out))
        return
    b = Bfv(req)
    if mode == "time":
        out = {"seconds": time_op(b, req["op"], req.get("reps", 20))}
    elif mode == "ole":
        out = {"seconds": ole(b, req["slots"], req.get("answer_switches", 0))}
    elif mode == "eval":
        out = evaluate(b, req)
    else:
        raise SystemExit(json.dumps({"error": f"no mode {mode}"}))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
