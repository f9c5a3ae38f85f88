"""The Python API over the Rust core."""

from pathlib import Path

import pytest

import veil


def test_version():
    assert veil.version() == "0.1.0"


@pytest.mark.parametrize("link", ["memory", "tls"])
def test_simulate_mul_matches_plaintext(link):
    x = [1.5, -2.25, 3.0, 0.125]
    y = [2.0, 4.0, -1.5, 8.0]
    reports = veil.simulate_mul(x, y, parties=3, output=2, seed=7, link=link)
    assert [r.party for r in reports] == [0, 1, 2]
    assert reports[0].output is None and reports[1].output is None
    assert reports[2].output == pytest.approx([a * b for a, b in zip(x, y)], abs=1e-4)
    online = {r.party: next(p for p in r.phases if p.phase == "online") for r in reports}
    # Beaver: d and e for 4 elements to 2 peers (2*2*4*8 bytes), plus a share to party 2.
    assert online[0].bytes_sent == 128 + 32
    assert online[2].bytes_sent == 128
    assert all(p.rounds == 2 for p in online.values())


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(ValueError, match="x has 2 values"):
        veil.simulate_mul([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="link must be"):
        veil.simulate_mul([1.0], [1.0], link="carrier-pigeon")
    with pytest.raises(RuntimeError, match="out of range"):
        veil.simulate_mul([1e9], [1.0])
    with pytest.raises(RuntimeError, match="output party"):
        veil.simulate_mul([1.0], [1.0], parties=2, output=5)


def test_make_certs(tmp_path):
    veil.make_certs(3, tmp_path / "certs")
    names = sorted(p.name for p in (tmp_path / "certs").iterdir())
    assert names == ["ca.pem", "party-0.key", "party-0.pem", "party-1.key", "party-1.pem", "party-2.key", "party-2.pem"]
    with pytest.raises(ValueError):
        veil.make_certs(1, tmp_path / "x")


def test_minilm_runs_privately_close_to_plaintext():
    model = veil.Model()
    plain = model.run_plaintext("Hi there.")
    assert len(plain) == 1 and len(plain[0]) == 384
    report = model.run_private("Hi there.", security="semi-honest")
    assert report["tokens"] == 5
    assert report["cosine_vs_plaintext"] > 0.99
    assert report["plaintext"] == pytest.approx(plain[0], abs=1e-12)
    roles = [p["role"] for p in report["per_party"]]
    assert roles == ["server", "server", "server", "data owner", "model owner"]
    assert [p["output"] is not None for p in report["per_party"]] == [False, False, False, True, False]
    assert [p["material"] for p in report["per_party"]] == ["on-demand"] * 3 + [None, None]
    ahead = model.run_private("Hi there.", security="semi-honest", offline="ahead")
    assert ahead["cosine_vs_plaintext"] > 0.99
    assert ahead["per_party"][0]["material"] == "ahead"
    with pytest.raises(ValueError, match="ahead"):
        model.run_private("Hi there.", offline="later")


def test_without_modulus_conversion():
    tiny = Path(__file__).resolve().parents[2] / "crates" / "nn" / "tests" / "data" / "tiny-gpt2"
    model = veil.Model(tiny)
    report = model.run_private("Hi there.", security="semi-honest", rings="z64")
    assert report["rings"] == "z64"
    assert report["cosine_vs_plaintext"] > 0.999
    # The fixed-point executor follows the same rings: the secure run stays within truncation
    # units of it (the tiny GPT-2's logits reach about 10).
    assert report["max_abs_vs_fixed_point"] < 0.1
    with pytest.raises(ValueError, match="rings must be"):
        model.run_private("Hi there.", rings="z32")


def test_model_errors_are_clear(tmp_path):
    # Raised when the model is named, not when it first runs.
    with pytest.raises(FileNotFoundError, match="no model at"):
        veil.Model(tmp_path / "missing")
    with pytest.raises(ValueError, match="config.json"):
        veil.Model(tmp_path)
    with pytest.raises(ValueError, match="family"):
        veil.Model(TINY_GPT2).run_private("x", family="aegis")


TINY_GPT2 = Path(__file__).resolve().parents[2] / "crates" / "nn" / "tests" / "data" / "tiny-gpt2"


DIGITS = Path(__file__).resolve().parents[2] / "models" / "digits-cnn" / "model.onnx"


def test_a_text_model_counts_the_tokens_of_a_text():
    model = veil.Model(TINY_GPT2)
    ids = model.tokens("Hello there")
    assert len(ids) > 0 and all(isinstance(i, int) for i in ids)
    assert model.tokens("Hello there, again") [: len(ids)] == ids
    with pytest.raises(ValueError, match="image model"):
        veil.Model(DIGITS).tokens("x")


def test_an_image_set_loads_as_nested_lists_with_its_labels():
    images, labels = veil.load_images(DIGITS.with_name("test.safetensors"), count=3)
    assert len(images) == 3 and len(labels) == 3
    assert len(images[0]) == 1 and len(images[0][0]) == 8 and len(images[0][0][0]) == 8
    assert all(0 <= label <= 9 for label in labels)
    plain = veil.Model(DIGITS).run_plaintext(images)
    assert sum(max(range(10), key=row.__getitem__) == label for row, label in zip(plain, labels)) >= 2
    with pytest.raises(ValueError, match="count"):
        veil.load_images(DIGITS.with_name("test.safetensors"), count=0)
    with pytest.raises(ValueError):
        veil.load_images(DIGITS)


def test_onnx_cnn_classifies_privately_under_aegis():
    cnn = veil.Model(DIGITS)
    # Two 8x8 grey images as nested lists: a bright vertical bar and a blank one.
    bar = [[[1.0 if 3 <= c <= 4 else 0.0 for c in range(8)] for _ in range(8)]]
    blank = [[[0.0] * 8 for _ in range(8)]]
    images = [bar, blank]
    plain = cnn.run_plaintext(images)
    assert len(plain) == 2 and len(plain[0]) == 10
    report = cnn.run_private(images)
    assert report["family"] == "aegis" and report["images"] == 2
    assert report["predictions"] == report["plaintext_predictions"]
    assert report["max_abs_error"] < 0.02
    phases = [p["phase"] for p in report["per_party"][0]["phases"]]
    assert phases == ["offline", "online", "verify"]
    with pytest.raises(ValueError, match="malicious"):
        cnn.run_private(images, security="semi-honest")
    with pytest.raises(ValueError, match="regular array"):
        cnn.run_private([bar, [[[0.0] * 7]]])
    with pytest.raises(ValueError, match="batch"):
        cnn.run_plaintext([[[0.0] * 8] * 8])


def test_fixed_point_executor_follows_the_family_without_mpc():
    model = veil.Model()
    r = model.run_fixed_point("Hi there.")
    assert r["family"] == "mosformer" and r["shape"] == [1, 384]
    assert r["float"] == pytest.approx(model.run_plaintext("Hi there.")[0], abs=1e-12)
    assert 0 < r["max_abs_fixed_vs_float"] < 0.05
    with pytest.raises(ValueError, match="no such layer"):
        model.run_fixed_point("Hi there.", family="aegis")
    cnn = veil.Model(DIGITS)
    bar = [[[1.0 if 3 <= c <= 4 else 0.0 for c in range(8)] for _ in range(8)]]
    r = cnn.run_fixed_point([bar])
    assert r["family"] == "aegis" and r["rings"] is None and r["overflows"] == []
    assert r["fixed_point"] == pytest.approx(r["float"], abs=0.01)
    loud = cnn.run_fixed_point([[[[1e9] * 8 for _ in range(8)]]])
    assert loud["overflows"][0]["op"] == "conv2d" and loud["overflows"][0]["what"] == "product"
    with pytest.raises(ValueError, match="does not fit"):
        cnn.run_fixed_point([[[[1e15] * 8 for _ in range(8)]]])
    # mosformer's arithmetic without modulus conversion: ReLU compares all 64 bits.
    z64 = cnn.run_fixed_point([bar], family="mosformer", rings="z64")
    assert z64["family"] == "mosformer" and z64["rings"] == "z64"
    assert z64["fixed_point"] == pytest.approx(z64["float"], abs=0.01)
    with pytest.raises(ValueError, match="mosformer option"):
        cnn.run_fixed_point([bar], rings="z64")


def test_a_vit_folder_classifies_one_image_privately_under_mosformer():
    vit = veil.Model(Path(__file__).resolve().parents[2] / "crates" / "nn" / "tests" / "data" / "tiny-vit")
    assert vit.takes_images
    # One 16x16 RGB image of raw pixel values: the model's processor normalizes it.
    image = [[[float((17 * r + 5 * c + 60 * ch) % 256) for c in range(16)] for r in range(16)] for ch in range(3)]
    plain = vit.run_plaintext([image])
    assert len(plain) == 1 and len(plain[0]) == 3
    report = vit.run_private([image])
    assert report["family"] == "mosformer"
    assert report["predictions"] == report["plaintext_predictions"]
    assert report["max_abs_error"] < 0.1
    fixed = vit.run_fixed_point([image])
    assert fixed["family"] == "mosformer" and fixed["overflows"] == []
    with pytest.raises(RuntimeError, match="one image per run"):
        vit.run_private([image, image])


def test_material_prepared_ahead_serves_one_private_run(tmp_path):
    gpt2 = veil.Model(Path(__file__).resolve().parents[2] / "crates" / "nn" / "tests" / "data" / "tiny-gpt2")
    servers = gpt2.prepare(6, tmp_path / "material")
    assert [s["party"] for s in servers] == [0, 1, 2]
    assert all(s["file_bytes"] > 0 and s["gates"] > 0 and s["id"] == servers[0]["id"] for s in servers)
    report = gpt2.run_private("Hello there", material=tmp_path / "material")
    assert report["tokens"] == 6
    assert report["cosine_vs_plaintext"] > 0.99
    assert [p["material"] for p in report["per_party"]] == ["stored"] * 3 + [None, None]
    with pytest.raises(RuntimeError, match="serves one session"):
        gpt2.run_private("Hello there", material=tmp_path / "material")
    with pytest.raises(ValueError, match="tokens must be 1 to"):
        gpt2.prepare(0, tmp_path / "other")


def test_families_and_the_additive_family_among_any_number_of_parties():
    names = [f["name"] for f in veil.families()]
    assert names == ["mosformer", "aegis", "mm", "additive"]
    additive = veil.families()[3]
    assert additive["parties"] == {"at_least": 2} and additive["owners"] == ["inside", "outside"]
    assert veil.families()[2]["parties"] == {"exactly": 2}
    assert "InsecureDealer" in additive["preprocessing"]
    cnn = veil.Model(DIGITS)
    bar = [[[1.0 if 3 <= c <= 4 else 0.0 for c in range(8)] for _ in range(8)]]
    for parties, owners in [(2, "inside"), (4, "outside")]:
        r = cnn.run_private([bar], family="additive", parties=parties, owners=owners)
        assert r["predictions"] == r["plaintext_predictions"]
        assert r["topology"]["computing"] == parties
        assert len(r["per_party"]) == parties + (2 if owners == "outside" else 0)
    with pytest.raises(ValueError, match="2 or more computing parties"):
        cnn.run_private([bar], family="additive", parties=1)
    with pytest.raises(ValueError, match="no family"):
        cnn.run_private([bar], family="spdz")
    # mm: the client and the server compute, each owning its part.
    r = cnn.run_private([bar], family="mm")
    assert r["predictions"] == r["plaintext_predictions"] and r["topology"]["computing"] == 2
    with pytest.raises(ValueError, match="no transformer layers"):
        veil.Model().run_private("Hi there.", family="additive")
