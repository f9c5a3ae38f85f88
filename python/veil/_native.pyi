"""Type stubs of the Rust extension module."""

def version() -> str: ...
def families() -> str: ...
def simulate_mul(
    x: list[float],
    y: list[float],
    parties: int = 3,
    output: int = 0,
    seed: int = 0,
    link: str = "memory",
) -> str: ...
def make_certs(parties: int, out: str, name: str = "veil") -> None: ...
def private_inference(
    model_dir: str,
    text: str,
    security: str | None = None,
    link: str = "memory",
    offline: str | None = None,
    material: str | None = None,
    rings: str | None = None,
    family: str | None = None,
) -> str: ...
def prepare_material(
    model_dir: str,
    tokens: int,
    out: str,
    security: str = "malicious",
    link: str = "memory",
    rings: str = "mixed",
) -> str: ...
def plaintext_inference(model_dir: str, text: str) -> tuple[list[float], int, int]: ...
def private_classification(
    model_path: str,
    data: list[float],
    shape: list[int],
    family: str | None = None,
    security: str | None = None,
    link: str = "memory",
    offline: str | None = None,
    rings: str | None = None,
    parties: int | None = None,
    owners: str | None = None,
) -> str: ...
def plaintext_classification(
    model_path: str, data: list[float], shape: list[int]
) -> tuple[list[float], int, int]: ...
def is_image_model(model_path: str) -> bool: ...
def fixed_point_inference(
    model_path: str,
    text: str | None = None,
    data: list[float] | None = None,
    shape: list[int] | None = None,
    family: str | None = None,
    rings: str | None = None,
) -> str: ...
