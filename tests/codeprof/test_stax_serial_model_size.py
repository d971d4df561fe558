"""JAX stax models (stax_layers.py): `stax.serial(...)` sized from the input shape its init function is called
with, with stax's own defaults (VALID padding, unit pool strides). Fixtures written for these tests."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.static.modelsize.stax_layers import count_stax

from .codeprof_support import file_readers


def _count(tmp_path: Path, text: str) -> tuple[int, list[str]] | None:
    (tmp_path / "train.py").write_text(text)
    return count_stax(*file_readers(tmp_path), "train.py")


SERIAL = '''
from jax import random
from jax.example_libraries import stax

init_fn, apply_fn = stax.serial(
    stax.Conv(4, (3, 3), padding="SAME"),
    stax.Relu,
    stax.MaxPool((2, 2)),
    stax.Flatten,
    stax.Dense(6),
    stax.LogSoftmax,
)

def main():
    _, params = init_fn(random.PRNGKey(0), (-1, 8, 8, 2))
'''


def test_a_stax_serial_model_is_sized_from_the_shape_its_init_is_called_with(tmp_path: Path) -> None:
    got = _count(tmp_path, SERIAL)
    # conv 3*3*2*4 + 4 = 76 (8x8 kept, SAME); pool 2x2 with unit strides -> 7x7x4 = 196; dense 196*6 + 6 = 1182
    assert got is not None and got[0] == 76 + 1182


NO_SHAPE = '''
from jax.example_libraries import stax
from jax.example_libraries.stax import Dense, Relu

init_fn, apply_fn = stax.serial(Dense(32), Relu, Dense(10))

def main(shape):
    init_fn(None, shape)
'''


def test_a_stax_model_whose_init_shape_is_not_known_stays_unknown(tmp_path: Path) -> None:
    assert _count(tmp_path, NO_SHAPE) is None


MEMBERS = '''
from jax.example_libraries.stax import serial, Dense, Tanh

init_mlp, predict = serial(Dense(16), Tanh, Dense(3))
init_mlp(None, (-1, 5))
'''


def test_stax_members_imported_by_name_are_read_as_well(tmp_path: Path) -> None:
    got = _count(tmp_path, MEMBERS)
    assert got is not None and got[0] == 5 * 16 + 16 + 16 * 3 + 3
