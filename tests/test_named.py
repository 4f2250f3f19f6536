"""What the failing lines name: each row of skill/telling/named.py reads its own example, and the sentence a fix gets."""

from __future__ import annotations

import pytest

from pathways_workload.skill.catalog import BY_ID
from pathways_workload.skill.telling.named import ROWS, named, sentence


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_each_row_names_the_thing_in_its_example(row):
    assert row.names in named([row.example]).get(row.name, [])


def test_one_dtype_alone_is_no_mismatch_and_two_are():
    assert "dtype" not in named(["x has type float32[8]"])
    assert named(["carry float32[8] but output bfloat16[8]"])["dtype"] == ["float32", "bfloat16"]


def test_traceback_frames_and_python_sources_are_not_what_to_change():
    text = ('Traceback (most recent call last):\n  File "/app/train.py", line 3, in <module>\n'
            "OSError: [Errno 30] Read-only file system: '/app/model.py'")
    assert named([text]) == {"code": ["`/app/train.py:3`"]}  # where the program raised, not a path to change


def test_the_programs_own_innermost_frame_is_named_with_its_source_line():
    text = ('Traceback (most recent call last):\n  File "/app/train.py", line 92, in <module>\n    step(p)\n'
            '  File "/app/train.py", line 88, in step\n    loss = jax.grad(f)(p)\n'
            '  File "/usr/lib/python3.11/site-packages/jax/_src/api.py", line 5, in grad\n    raise TypeError\n'
            'TypeError: Gradient only defined for scalar-output functions.')
    assert named([text])["code"] == ["`/app/train.py:88` (`loss = jax.grad(f)(p)`)"]


def test_a_path_the_spec_sets_is_said_with_its_setting():
    said = sentence(named(["FileExistsError: [Errno 17] File exists: '/var/cache/jax'"]),
                    {"/var/cache/jax": "JAX_COMPILATION_CACHE_DIR"})
    assert "`/var/cache/jax` (set by JAX_COMPILATION_CACHE_DIR)" in said


def test_nothing_named_says_nothing():
    assert sentence(named(["the run failed"])) == ""


def test_a_fix_in_the_workload_names_what_its_lines_name(diagnoses):
    d = diagnoses["case-180"]  # hbm_oom on real output: the memory report names the buffers
    assert BY_ID[d.failure_class].fixed_in_workload
    assert any("f32[65536,128000]" in f.summary for f in d.fix)


def test_an_infrastructure_cause_gets_no_such_fix(diagnoses):
    d = diagnoses["case-127"]  # tpu_hardware_failure: its lines name the program, but nothing there is to change
    assert not BY_ID[d.failure_class].fixed_in_workload
    assert not any(f.summary.startswith("What the failing lines name") for f in d.fix)
