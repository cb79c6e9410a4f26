"""Defects the runs on real repositories found in rra init's detection (docs/builder-corpus.md):
a conda export's entries pip cannot read, and a printf-style label read across another value."""

from __future__ import annotations

from rra_tools.builder.detect.claims import metric_prints
from rra_tools.builder.detect.environment import conda_to_pip


def test_conda_entries_pip_cannot_read_are_not_requirements() -> None:
    # An explicit conda export (streaming-fl-conda, triplet-console): a version that is not PEP
    # 440 and a conda meta-package were written as requirements that rra lock refused.
    assert conda_to_pip("jpeg=9e=h7f8727e_0") is None
    assert conda_to_pip("_pytorch_select=0.2=gpu_0") is None
    assert conda_to_pip("_libgcc_mutex=0.1=main") is None
    assert conda_to_pip("numpy=1.26.4=py311h64a7726_0") == "numpy==1.26.4.*"
    assert conda_to_pip("scipy>=1.10") == "scipy>=1.10"


def test_conda_names_of_pypi_packages_and_c_libraries() -> None:
    # streaming-fl-conda's export, run 2: conda's name for PyPI's brotli, and the C libraries an
    # explicit export lists beside the Python packages (pip has none of them).
    assert conda_to_pip("brotli-python=1.0.9=py311h6a678d5_7") == "brotli==1.0.9.*"
    assert conda_to_pip("msgpack-python=1.0.3") == "msgpack==1.0.3.*"
    for library in ("libgfortran5=11.2.0", "libgcc-ng=11.2.0", "zstd=1.5.5", "lz4-c=1.9.4", "tzdata=2023c",
                    "libpng=1.6.39", "freetype=2.12.1", "xz=5.4.2", "ncurses=6.4", "sqlite=3.41.2"):
        assert conda_to_pip(library) is None, library
    # Python packages whose names begin as a C library's do are still translated.
    assert conda_to_pip("librosa=0.10.1") == "librosa==0.10.1.*"


def test_a_printf_label_does_not_span_the_value_before_it() -> None:
    found = metric_prints("solve.py", 'print("Iter %d. obj: %f" % (it, obj))\n'
                                      'print("train acc: %.3f, test acc: %.3f" % (a, b))\n')
    assert [f.note for f in found] == ["printed metric 'obj'", "printed metric 'train acc'",
                                       "printed metric 'test acc'"]
    assert found[0].value == r"stdout regex obj:\s*([-+]?[0-9.]+(?:[eE][-+]?[0-9]+)?)"
