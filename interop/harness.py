"""Where the interoperability tests find the Rust binaries they run."""

import json
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def target_dir() -> Path:
    """Cargo's target directory: CARGO_TARGET_DIR, else what `cargo metadata` says."""
    if os.environ.get("CARGO_TARGET_DIR"):
        return Path(os.environ["CARGO_TARGET_DIR"])
    out = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--no-deps"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(json.loads(out.stdout)["target_directory"])


def example_binary(name: str) -> str:
    """The debug build of `cargo build -p agent-examples --example NAME`."""
    return str(target_dir() / "debug" / "examples" / name)
