"""The papers' benchmark tables that `bench_report.py` puts beside Veil's figures.

Values are copied from the papers' tables as printed, with each paper's conventions. Units:
Mosformer's "MB" is 2^20 bytes per party and its "rounds" count sends per party; Aegis counts
total bits over the three parties and its Table 3 "Com" in MB does not say whose sends it sums.
"""

# Mosformer (ACM CCS 2025), Table 4: online, single thread, Z_2^32, f = 12.
# op -> [(n, LAN s, WAN s, Comm MB, rounds)]
MOSFORMER_TABLE4 = {
    "drelu": [
        (10**4, 0.021, 0.081, 1.144, 18),
        (10**5, 0.162, 0.422, 11.444, 18),
        (10**6, 1.992, 4.949, 114.441, 18),
    ],
    "inv": [(10**2, 0.006, 0.084, 0.051, 42), (10**4, 0.12, 0.303, 5.112, 42)],
    "rsqrt": [(10**2, 0.006, 0.085, 0.056, 42), (10**4, 0.124, 0.315, 5.646, 42)],
}

# Mosformer Table 5: the LUT, single thread.
# [(n, LAN off s, LAN on s, WAN off s, WAN on s, Comm off MB, Comm on MB)]
MOSFORMER_TABLE5 = [
    (10**3, 0.013, 0.007, 0.034, 0.037, 0.210, 0.053),
    (10**4, 0.143, 0.038, 0.368, 0.071, 2.098, 0.534),
    (10**5, 1.371, 0.313, 3.497, 0.405, 20.981, 5.341),
]

# Mosformer Table 12: GELU online (its ring: Z_2^32, f = 12). [(n, LAN s, WAN s, Comm MB, rounds)]
MOSFORMER_TABLE12 = [(10**4, 0.058, 0.195, 3.395, 38), (10**5, 0.472, 1.135, 33.951, 38)]

# Mosformer Tables 8 (LAN 1 Gbps/0.5 ms, WAN 400 Mbps/4 ms) and 9 (Ditto's settings: LAN
# 5 Gbps/0.4 ms, WAN 400 Mbps/40 ms): whole models, 16 threads for matmul.
# (table, model, tokens, security) -> (LAN on s, LAN off s, WAN on s, WAN off s, Comm on GB, Comm off GB)
MOSFORMER_MODELS = {
    ("Table 8", "bert-base", 128, "malicious"): (59.47, 547.66, 143.02, 1339.14, 4.60, 67.35),
    ("Table 8", "bert-base", 128, "semi-honest"): (20.09, 323.28, 49.74, 827.60, 1.15, 40.42),
    ("Table 8", "gpt2", 64, "malicious"): (39.26, 273.83, 98.89, 672.57, 3.07, 33.67),
    ("Table 8", "gpt2", 64, "semi-honest"): (9.70, 160.43, 23.25, 413.28, 0.45, 20.18),
    ("Table 9", "bert-base", 128, "malicious"): (25.63, 109.46, 226.02, 1342.37, 4.60, 67.35),
    ("Table 9", "bert-base", 128, "semi-honest"): (10.88, 63.79, 93.11, 832.48, 1.15, 40.42),
}

# The networks of Tables 8 and 9: (name, bandwidth bit/s, RTT s).
MOSFORMER_NETWORKS = {
    "Table 8": (("LAN", 1e9, 0.5e-3), ("WAN", 400e6, 4e-3)),
    "Table 9": (("LAN", 5e9, 0.4e-3), ("WAN", 400e6, 40e-3)),
}

# Aegis (the notes' §5.3 and §5.4): per-element costs in bits over the three parties, l = 64.
# op -> (offline bits, online rounds, online bits, source)
L = 64
AEGIS_TABLE6 = {
    "mul": (L, 1, 2 * L, "Table 1/6: Mult"),
    "inner": (L, 1, 2 * L, "Table 1/6: inner product (any dimension)"),
    "trunc": (L, 0, 0, "Table 6: truncation"),
    "sign": ((L - 1) * 6 + 2 * L, 2, 4 * L * 6 + 2 * L, "Table 6: sign-bit extraction (log l = 6)"),
    "relu": ((L - 1) * 6 + 4 * L, 2, 4 * L * 6 + 4 * L, "Table 6: ReLU"),
    "maxpool": (3 * (4 * L + L * 6), 4, 3 * 4 * L * (6 + 2), "Table 6: MaxPool, n = 4 (2x2 window)"),
}

# Aegis Table 4: semi-honest non-arithmetic ops, MAN setting, as printed.
# op -> [(n, offline comm bytes, online comm bytes, offline ms, online ms)]
AEGIS_TABLE4 = {
    "sign": [(2**4, 1.1e3, 4.2e3, 11.52, 19.41), (2**8, 16.6e3, 66.4e3, 11.96, 19.99),
             (2**16, 4.2e6, 17.0e6, 77.59, 249.58)],
    "relu": [(2**4, 1.3e3, 5.2e3, 11.67, 19.47), (2**8, 20.7e3, 83.1e3, 11.96, 20.01),
             (2**16, 5.3e6, 21.2e6, 77.71, 262.12)],
    "maxpool": [(2**4, 1.1e3, 5.1e3, 11.75, 36.38), (2**8, 20.6e3, 82.8e3, 11.86, 73.28),
                (2**16, 5.3e6, 21.2e6, 76.04, 564.42)],
}

# The Aegis paper's CNNs as Veil builds them (`veil_nn::zoo::cnn`), per image: ReLUs, 2x2
# MaxPool windows, outputs of linear layers (each one multiplication or inner product and one
# truncation). S-NN: conv 5x13x13 with ReLU, FC 10. LeNet: conv 6x28x28, pool, conv 16x10x10,
# pool, FC 120, 84 (ReLU) and 10. VGG-16 at 64x64: 13 conv (widths 64..512), 5 pools, FC 512, 512
# (ReLU) and 200.
AEGIS_CNN_OPS = {
    "snn": (845, 0, 845 + 10),
    "lenet": (4704 + 1600 + 120 + 84, 1176 + 400, 4704 + 1600 + 120 + 84 + 10),
    "vgg16": (2 * 64 * 64 * 64 + 2 * 128 * 32 * 32 + 3 * 256 * 16 * 16 + 3 * 512 * 8 * 8 + 3 * 512 * 4 * 4
              + 512 + 512,
              64 * 32 * 32 + 128 * 16 * 16 + 256 * 8 * 8 + 512 * 4 * 4 + 512 * 2 * 2,
              2 * 64 * 64 * 64 + 2 * 128 * 32 * 32 + 3 * 256 * 16 * 16 + 3 * 512 * 8 * 8 + 3 * 512 * 4 * 4
              + 512 + 512 + 200),
}


def aegis_table6_mb(model: str, stage: str) -> float:
    """Table 6's bits for one image of `model` (`stage`: "offline" or "online"), in MB: ReLUs,
    2x2 MaxPools, and per linear output a multiplication and a truncation."""
    relu, pools, linear = AEGIS_CNN_OPS[model]
    col = 0 if stage == "offline" else 2
    bits = (relu * AEGIS_TABLE6["relu"][col] + pools * AEGIS_TABLE6["maxpool"][col]
            + linear * (AEGIS_TABLE6["mul"][col] + AEGIS_TABLE6["trunc"][col]))
    return bits / 8 / 1e6


# Aegis Table 3: LAN, batch 30. model -> {stage: (offline MB, offline ms, online MB, rounds, online ms)}
AEGIS_TABLE3 = {
    "snn": {"execution": (0.05, 6.07, 0.17, 2, 13.19), "verification": (None, None, 1.75, 3, 23.52)},
    "lenet": {"execution": (0.65, 7.40, 2.46, 42, 104.9), "verification": (None, None, 26.1, 10, 118.2)},
    "vgg16": {"execution": (10.2, 207, 39.2, 127, 8341), "verification": (None, None, 414, 18, 12157)},
}
