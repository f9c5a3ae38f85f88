"""Type stubs of the Rust extension module."""

def version() -> str: ...
def simulate_mul(
    x: list[float],
    y: list[float],
    parties: int = 3,
    output: int = 0,
    seed: int = 0,
    link: str = "memory",
) -> str: ...
def make_certs(parties: int, out: str, name: str = "veil") -> None: ...
