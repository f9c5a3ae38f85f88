"""The Python API over the Rust core."""

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


def test_model_errors_are_clear(tmp_path):
    with pytest.raises(ValueError, match="not a model folder"):
        veil.Model(tmp_path / "missing").run_plaintext("x")
    with pytest.raises(RuntimeError, match="config.json"):
        veil.Model(tmp_path).run_private("x")
    with pytest.raises(ValueError, match="family"):
        veil.Model(tmp_path).run_private("x", family="aegis")  # type: ignore[arg-type]
