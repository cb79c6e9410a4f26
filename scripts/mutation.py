#!/usr/bin/env python3
"""Mutation testing: change one thing in a module at a time and check that its tests notice.

    python scripts/mutation.py                        # the default modules, 40 mutants each
    python scripts/mutation.py rra_tools/intervals.py --max 0 --timeout 120
    python scripts/mutation.py --list rra_tools/validate/rules/levels.py

Each mutant is one small change made on the module's syntax tree (a comparison's boundary or
sense, ``and``/``or``, an arithmetic operator, a number plus one, ``True``/``False``, ``not``
dropped, ``continue``/``break`` swapped, a returned value replaced by ``None``, ``+=``/``-=``).
The mutated module is written into a copy of the source tree, and only the tests that cover
the module (:data:`MODULES`) run there, with ``-x`` and a time limit, in a process group of its
own (the tests start ``rra`` subprocesses: ``PYTHONPATH`` points them at the copy too). A
mutant is *killed* when the tests fail or time out, and *survives* when they pass. Mutants
listed in :data:`EQUIVALENT` cannot change behaviour and are left out of the score.

Why not mutmut or cosmic-ray: mutmut 3.8 (tried) puts its trampolines into a copy of the tree
(``mutants/``) that the pytest process imports, while this suite's tests import the installed
package and run ``python -m rra_tools`` in subprocesses; it found no test covering any mutant.
A runner of ~300 lines that copies the tree and sets ``PYTHONPATH`` fits the suite, keeps a run
cheap (a sample of mutants per module, only the covering tests) and needs no dependency.

The score per module is printed and, with ``--json FILE``, written as JSON. docs/mutation.md
holds the latest figures.
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Each module and the pytest arguments that select the tests covering it (fastest first, so
#: that ``-x`` stops a killed mutant early).
MODULES: dict[str, list[str]] = {
    "rra_tools/intervals.py": [
        "tests/unit/test_intervals.py", "tests/unit/test_rules.py",
        "tests/unit/test_conformance.py", "-k", "intervals or rules or observations or reproduced",
    ],
    "rra_tools/validate/rules/levels.py": [
        "tests/unit/test_levels.py", "tests/unit/test_rules.py",
        "tests/unit/test_conformance.py", "-k", "levels or rules or evidence or reproduced or functional",
    ],
    "rra_tools/validate/rules/experiments.py": [
        "tests/unit/test_experiments.py", "tests/unit/test_rra_1_1.py", "tests/unit/test_rules.py",
        "tests/unit/test_conformance.py", "-k", "experiments or rules or claim or observations or seed or stability",
    ],
    "rra_tools/oci/unpack.py": [
        "tests/unit/test_oci_unpack_limits.py", "tests/unit/test_oci_unpack_place.py",
        "tests/unit/test_oci_unpack_messages.py", "tests/unit/test_oci_unpack.py", "tests/unit/test_oci_validate.py",
        "tests/unit/test_oci_pack.py", "tests/unit/test_conformance.py", "-k", "oci or unpack",
    ],
    "rra_tools/run/outcome.py": ["tests/unit/test_run_outcome.py", "tests/acceptance/test_run_outputs.py",
                                 "tests/unit/test_run_record.py", "tests/acceptance/test_run_local.py"],
    # Modules issue 10 added or rewrote.
    "rra_tools/run/extract.py": ["tests/unit/test_run_extract.py", "tests/unit/test_rra_1_1.py"],
    "rra_tools/run/tree.py": ["tests/unit/test_run_tree.py", "tests/unit/test_run_outcome.py",
                              "tests/acceptance/test_run_outputs.py", "tests/acceptance/test_run_local.py"],
    "rra_tools/io/links.py": ["tests/unit/test_links.py", "tests/unit/test_oci_unpack.py", "tests/unit/test_oci_pack.py",
                              "tests/unit/test_rules.py"],
    # Modules issue 10's speed work (the 10,000-launcher manifest read in < 2 s) changed.
    "rra_tools/io/limits.py": ["tests/unit/test_limits.py", "tests/unit/test_validate_shortcuts.py",
                               "tests/unit/test_source.py", "tests/unit/test_bad_input.py",
                               "-k", "limits or out_of_range or integer or range or source or bad"],
    "rra_tools/io/read/blockyaml.py": ["tests/unit/test_blockyaml.py", "tests/unit/test_source.py",
                                  "tests/unit/test_blockyaml_bounds.py"],
    # The locators of findings in the text (positions without the located reader's re-read).
    "rra_tools/io/read/blocklocate.py": ["tests/unit/test_blocklocate.py"],
    "rra_tools/io/read/jsonlocate.py": ["tests/unit/test_jsonlocate.py"],
    "rra_tools/validate/schema_layer.py": ["tests/unit/test_schema_cut.py", "tests/unit/test_schema_fast_path.py",
                                           "tests/unit/test_validate_shortcuts.py",
                                           "tests/unit/test_files_schema_equivalence.py", "tests/unit/test_rules.py",
                                           "tests/unit/test_conformance.py"],
    "rra_tools/validate/rules/references.py": ["tests/unit/test_rules.py", "tests/unit/test_rules_equivalence.py",
                                               "tests/unit/test_conformance.py"],
    # Trust-critical modules of issue 23 item 11 (the verdicts of packets, the review, claim detection).
    "rra_tools/bench/packet.py": ["tests/unit/test_bench_packet.py", "tests/acceptance/test_bench_packet.py"],
    "rra_tools/builder/review/checks.py": ["tests/unit/test_builder_review_checks.py", "tests/unit/test_claim_kinds.py",
                                           "tests/unit/test_builder_review.py", "tests/acceptance/test_builder_review.py"],
    "rra_tools/builder/detect/claims.py": ["tests/unit/test_builder_detect_claims.py", "tests/unit/test_builder_detect.py",
                                           "tests/unit/test_builder_detect_extras.py",
                                           "tests/unit/test_builder_draft_claims.py"],
    # The auditor and the scoring of submissions (issue 23 item 11: the verdicts of rra bench). The
    # journal tests' bubblewrap cells cannot see the mutated copy of the tree: only --sandbox none runs.
    "rra_tools/bench/scoring.py": ["tests/unit/test_bench_scoring.py", "tests/unit/test_bench_answers.py",
                                   "tests/unit/test_bench_score.py", "tests/unit/test_bench_report.py"],
    "rra_tools/bench/score.py": ["tests/unit/test_bench_score_cells.py", "tests/unit/test_bench_audit_edges.py",
                                 "tests/unit/test_bench_score.py", "tests/unit/test_bench_answers.py",
                                 "tests/acceptance/test_bench_audit_answers.py", "tests/acceptance/test_bench_journal.py",
                                 "-k", "not bwrap"],
    "rra_tools/bench/audit/auditor.py": ["tests/unit/test_bench_audit_edges.py", "tests/unit/test_bench_score.py",
                                         "tests/unit/test_bench_answers.py", "tests/acceptance/test_bench_audit_answers.py",
                                         "tests/acceptance/test_bench_journal.py", "tests/acceptance/test_bench_audit.py",
                                         "-k", "not bwrap"],
    "rra_tools/bench/audit/attempt_file.py": ["tests/unit/test_bench_attempt_file.py", "tests/unit/test_bench_audit_edges.py",
                                              "tests/unit/test_bench_score.py", "tests/acceptance/test_bench_journal.py",
                                              "-k", "not bwrap"],
    "rra_tools/io/journal.py": ["tests/unit/test_journal_bounds.py", "tests/unit/test_journal.py",
                                "tests/acceptance/test_bench_journal.py", "tests/acceptance/test_bench_audit.py",
                                "-k", "not bwrap"],
}

#: Mutants that cannot change behaviour, by module and "function: before -> after", with the
#: reason. They are generated and listed, but not run and not scored.
EQUIVALENT: dict[str, dict[str, str]] = {
    "rra_tools/intervals.py": {
        # The bisection's start, growth and stop only change how fast it converges: the quantile
        # is the same to the 1e-13 it stops at, far inside the 1e-10 the spec promises.
        "t_quantile: 1.0 -> 2.0": "the first upper bracket (1 or 2) is doubled until it holds the quantile",
        "t_quantile: 2.0 -> 3.0": "the bracket grows by 2 or 3 until it holds the quantile",
        "t_quantile: 1e-13 * max(1.0, high) -> 1e-13 / max(1.0, high)":
            "the stop's width above 1: 1e-13 * high or 1e-13 / high; the same below 1, and above it both give "
            "the quantile to 1e-13 relative or better, only digits past that change",
        "t_quantile: 200 -> 201": "a cap never reached: halving a bracket of width high stops at 1e-13 * high "
                                  "after about 44 steps",
        "t_quantile: high - low < 1e-13 * max(1.0, high) -> high - low <= 1e-13 * max(1.0, high)":
            "the stop at a width of exactly 1e-13 or just below it: the same quantile to 1e-13",
        # Lentz's guard against division by zero: a term of magnitude exactly 1e-300 is replaced
        # by 1e-300 or kept; it differs only in sign, only when it is exactly +-1e-300.
        **{f"_betacf: {term} > tiny -> {term} >= tiny{n}": "the guard's boundary, exactly 1e-300"
           for term in ("abs(d)", "abs(1.0 + aa / c)") for n in ("", " (#2)", " (#3)")},
        # Measured against SciPy at the switch point, df 30 to 10^7: the direct branch is off by
        # 6e-16 to 1e-10, the symmetric one by 6e-15 to 2e-9 (the fraction converges slowest there).
        "_incomplete_beta: x < (a + 1.0) / (a + b + 2.0) -> x <= (a + 1.0) / (a + b + 2.0)":
            "both branches compute I_x(a, b) (the second through I_x(a, b) = 1 - I_(1-x)(b, a)); they differ "
            "only at x exactly equal to the switch point, and there only in rounding",
        "_betacf: aa / c -> aa * c (#4)": "the guard 'abs(1.0 + aa / c) > tiny' read as 'abs(1.0 + aa * c) > tiny' "
                                          "differs only when aa / c or aa * c is -1 within 1e-300",
        "_betacf: 1.0 -> 2.0 (#14)": "the guard 'abs(1.0 + aa / c) > tiny' read as 'abs(2.0 + aa / c) > tiny' "
                                     "differs only when aa / c is exactly -2 or -1 within 1e-300",
        # The full run of 2026-12-01 (118 mutants never sampled before): 19 more of the same kinds.
        **{k: "the bisection's comparisons at exact equality with p: the CDF equals p at one point, "
              "where both halves give the same quantile to 1e-13"
           for k in ("t_quantile: _t_cdf(high, df) < p -> _t_cdf(high, df) <= p",
                     "t_quantile: _t_cdf(mid, df) < p -> _t_cdf(mid, df) <= p")},
        **{k: "the bisection without its early stop (never true, or passed over) runs all 200 halvings: the "
              "bracket is already below 1e-13 after about 44, so the midpoint is the same to 1e-13"
           for k in ("t_quantile: break -> continue", "t_quantile: high - low -> high + low",
                     "t_quantile: 1.0 -> 2.0 (#3)")},
        **{k: "Lentz's fraction without its early stop, or with a cap one higher: once |delta - 1| < 1e-15 each "
              "further step multiplies h by 1 within 1e-15, so the value is the same past the 1e-10 of the spec"
           for k in ("_betacf: 300 -> 301", "_betacf: break -> continue",
                     "_betacf: abs(delta - 1.0) < 1e-15 -> abs(delta - 1.0) <= 1e-15",
                     "_betacf: delta - 1.0 -> delta + 1.0", "_betacf: 1.0 -> 2.0 (#12)")},
        **{k: "a variant of the 1e-300 guard's condition (|1 + aa/c| > tiny): it differs only when aa / c is "
              "within 1e-300 of a fixed value, never for the a, b, x the t CDF asks for"
           for k in ("_betacf: 1.0 + aa / c -> 1.0 - aa / c (#3)", "_betacf: 1.0 + aa / c -> 1.0 - aa / c (#4)",
                     "_betacf: 1.0 -> 2.0 (#13)", "_betacf: aa / c -> aa * c (#3)")},
        **{k: "the branch switch point (a + 1) / (a + b + 2) moved: both branches compute I_x(a, b), measured "
              "against SciPy (see the entry above), so only rounding changes"
           for k in ("_incomplete_beta: 1.0 -> 2.0 (#4)", "_incomplete_beta: 2.0 -> 3.0")},
        "_t_cdf: t >= 0 -> t > 0": "at t = 0 the tail is 0.5 * I_1(df/2, 1/2) = 0.5, and 1 - 0.5 = 0.5",
        **{k: "(v + mean) * (v - mean) summed is sum(v^2) - n * mean^2 = sum((v - mean)^2), since sum(v) = n * mean; "
              "each term keeps the exact small factor v - mean, so it differs only in rounding"
           for k in ("acceptance_interval: v - mean -> v + mean", "acceptance_interval: v - mean -> v + mean (#2)")},
    },
    "rra_tools/run/outcome.py": {
        "_written: 0 -> 1": "the default of an empty state (the output vanished after it was found): 0 or 1 ns "
                            "after 1970 are both older than any start less STALE_SLACK_S",
        "allowed_writes: 1 -> 2": "split('{', 1) or split('{', 2): element [0], the text before the first '{', "
                                  "is the same",
        "allowed_writes: return allowed -> return None (#2)":
            "unreachable: Artifact.runs_dir is root / a relative path without '..' (else ArtifactError), "
            "so relative_to(root) cannot raise ValueError",
    },
    "rra_tools/io/limits.py": {
        "has_out_of_range_integer: kind is str or kind is float or kind is bool or (child is None) -> "
        "kind is str and kind is float and (kind is bool) and (child is None)":
            "only the shortcut past scalars: a str, float or None then fails every later test (not int, dict or "
            "list, nor an instance of int, Mapping or list), and a bool reaches the general walk, which passes "
            "over booleans; the same answer, more slowly",
        "has_out_of_range_integer: kind is dict or kind is list -> kind is dict and kind is list":
            "a dict or list child then goes to the general walk (out_of_range_integers) at once instead of to "
            "the next level: the same answer, more slowly",
        "<module>: 32 -> 33": "the class of every byte that is no digit, x, o or backslash: a space or '!'; the "
                              "three searches look for neither",
    },
    "rra_tools/io/read/blockyaml.py": {
        "_read: 0 -> 1 (#4)": "end < 0 or end < 1 where end = text.find('\\n', position + _CHUNK): found, it is "
                              "at least _CHUNK; not found, -1",
        "_inline: len(value) < 19 -> len(value) <= 19": "a plain scalar of 19 ASCII digits read by int() at once "
                                                         "or by resolve_plain: the same integer",
        "_read: 0 -> 1 (#6)": "frame[0] == column read as frame[1] (the container, never a column) in the shortcut "
                              "for one more entry of the open sequence: _close_to then finds the same sequence",
        "<module>: 4096 -> 4097": "_FLOW_MEMO only bounds how many distinct flow sequences one read remembers (its "
                                  "memory on hostile input): past it a sequence is read again, to the same list",
        "_plain: return value -> return None":
            "unreachable: every caller (_flow twice, the last branch of _inline) passes a value whose first "
            "character is in _TYPED_FIRST",
        **{f"_plain: {before} -> {after}":
           "a plain scalar of 19 (or 20) ASCII digits read by int() at once or by resolve_plain, whose to_int "
           "is int(value, 10) below 4300 digits: the same integer"
           for before, after in (("len(value) < 19", "len(value) <= 19"), ("19", "20"))},
        **{k: "count > MAX_NODES // 2 or > MAX_NODES / 2: count is an integer and MAX_NODES even, so the same test"
           for k in ("_read: MAX_NODES // 2 -> MAX_NODES / 2", "_read: MAX_NODES // 2 -> MAX_NODES / 2 (#2)")},
        "_read: 2 -> 3 (#2)":
            "frame[2] (a sequence) read as frame[3] (a sequence under a key at its column) in the shortcut for "
            "one more entry of the open sequence: the other sequences then go through _close_to, which finds "
            "the same open sequence at that column; only slower",
        **{f"_inline: 0 -> 1 ({n})": "cut < 0 or cut < 1 where rest starts with '-' or another character of "
                                     "_PLAIN_FIRST, never a space: ' #' is never found at 0"
           for n in ("#2", "#3")},
    },
    "rra_tools/bench/packet.py": {
        "export_packets: True -> False (#4)": "made.transformation.model_dump(exclude_none=True) or False: no field of "
                                              "Transformation can be None (without, tree_digest, removed, reverted, "
                                              "fields), so the kept state file holds the same JSON",
        "score_packets: True -> False": "the stated usage dumped with or without its None fields validates to the same "
                                        "Usage (every field defaults to None), and results are written without None "
                                        "fields (exclude_none)",
    },
    "rra_tools/bench/audit/auditor.py": {
        **{f"{f}: {n} -> {n + 1}": "the size of a functools.lru_cache: only how many patterns are kept, never "
                                   "which one a call returns"
           for f, n in (("_constant_pattern", 4096), ("_hidden_forms", 65536), ("_union_pattern", 1024))},
    },
    "rra_tools/io/journal.py": {
        "__init__: 0 -> 1": "the default of getattr(os, 'O_NOFOLLOW', 0), used only where os has no O_NOFOLLOW "
                            "(every POSIX system this runs on has it)",
        "close: 1 -> 2": "a closed journal's descriptor set to -1 or -2: both fail the 'self._fd >= 0' test, so a "
                         "second close does nothing either way",
    },
    "rra_tools/bench/score.py": {
        "_score: True -> False (#2)": "read.usage.model_dump(exclude_none=True) or with the None fields: CellUsage "
                                      "validates either dict into the same Usage (every field defaults to None) and "
                                      "nothing reads which fields were set",
    },
    "rra_tools/builder/review/checks.py": {
        "_order: 1 -> 2 (#3)": "a record without a repeat ordered at -1 or -2 among its seed's records: every other "
                               "repeat is 0 or more (the run record's 'repeat' has ge=0), so both come first; they "
                               "differ only beside a repeat of -1, which no valid record has",
        "_order: 1 -> 2": "a record without a seed ordered at -1 or -2 among the launcher's records: a run's seed is "
                          "one of its launcher's seeds, which are 0 or more (ge=0), so both come first; they differ "
                          "only beside a seed of -1, which rra run never records",
        **{k: "a guard no caller reaches: reported_answer is called (by trace_claim and review's _claims) only with "
              "the index of one of artifact.manifest.claims, and the artifact's data is schema-valid, so 'claims' "
              "is a list that holds that index"
           for k in ("reported_answer: isinstance(claims, list) and index < len(claims) -> "
                     "isinstance(claims, list) or index < len(claims)",
                     "reported_answer: index < len(claims) -> index <= len(claims)")},
    },
    "rra_tools/builder/detect/claims.py": {
        **{k: "the loop over files stops at the cap, or goes on past it: detect_claims returns "
              "found[:MAX_CANDIDATES] either way, so only how many more files are read changes"
           for k in ("detect_claims: len(found) >= MAX_CANDIDATES -> len(found) > MAX_CANDIDATES",
                     "detect_claims: break -> continue")},
        "table_numbers: 1 -> 2": "index + 1 < len(lines) read as index + 2 < len(lines): the header it then never "
                                 "looks at, on the last line but one, could only have its separator on the last "
                                 "line and no row under it, so no cell",
        "latex_table_numbers: 0 -> 1 (#4)": "the else of 'lead.end() if lead else 0': re.match of a pattern that "
                                            "repeats with '*' always matches (the empty string at least), so lead "
                                            "is never None",
    },
    "rra_tools/io/links.py": {
        "problems: continue -> break": "unreachable: add() gives every node it lists a target, and nothing sets "
                                       "it back to None",
    },
    "rra_tools/oci/unpack.py": {
        **{f"<module>: 1024 -> 1025{n}": "_CHUNK (1024 * 1024) is only how much is read or written at a time; "
                                        "any positive size gives the same bytes and the same checks"
           for n in ("", " (#2)")},
        "__init__: True -> False": "_Bounded's default hashing=True is never used: both callers pass hashing",
        "_write_file: 0 -> 1": "the default of getattr(os, 'O_NOFOLLOW', 0), used only where os has no O_NOFOLLOW "
                               "(every POSIX system this runs on has it)",
        **{f"read: {a} -> {b}": "_Bounded.read's default size is never used: TarReader, drain, the gzip reader "
                                "and zstandard's stream_reader always pass one"
           for a, b in (("-1", "1"), ("1", "2"))},
        **{f"read: {a} -> {b}": "n >= 0 read as n > 0: only what _Bounded.read(0) does, and nothing asks it for 0 "
                                "bytes (TarReader.read returns b'' for n <= 0 without reading, _read_exact reads only "
                                "while n, the gzip and zstd readers ask for their fixed chunk)"
           for a, b in (("n >= 0", "n > 0"), ("0", "1"))},
        "_normalise: len(name) > 1 -> len(name) >= 1":
            "the one-character names lexical_issue refuses are '/', which startswith('/') settles first, and '\\', "
            "refused before; so name[1] is never read on a one-character name",
        "_add: False -> True": "os.link(..., follow_symlinks=False) or True: the original is always a regular file "
                               "this unpack wrote (kinds[original] == 'file', never a link), and following "
                               "applies to that last component only",
        **{f"read: {before} -> {after}":
           "only how many bytes one read asks for near the limit: every caller loops until b'', and a byte "
           "past the limit raises the same error after any read that brings it"
           for before, after in (("self._limit - self.count + 1", "self._limit - self.count - 1"),
                                 ("self._limit - self.count", "self._limit + self.count"),
                                 ("1", "2 (#2)"), ("1", "2 (#3)"))},
    },
    "rra_tools/validate/rules/experiments.py": {
        # The rules read what the one loader (io/read/source.py) parsed: every mapping is a plain dict,
        # so 'type(obs) is dict' alone decides (isinstance(obs, Mapping) is a fallback it never reaches).
        **{f"{f}: type(obs) is dict or isinstance(obs, Mapping) -> type(obs) is dict and isinstance(obs, Mapping)":
           "every mapping the loader gives is a plain dict, for which both conditions hold"
           for f in ("_repeats", "_independence")},
        **{k: "every mapping the loader gives is a plain dict, for which both conditions hold (the claim's "
              "reference, its reported block and each observation are read with the exact type first)"
           for k in ("observations: type(reported) is dict or isinstance(reported, Mapping) -> "
                     "type(reported) is dict and isinstance(reported, Mapping)",
                     "observations: type(reported) is dict or isinstance(reported, Mapping) -> "
                     "type(reported) is dict and isinstance(reported, Mapping) (#2)",
                     "observations: type(reference) is dict or isinstance(reference, Mapping) -> "
                     "type(reference) is dict and isinstance(reference, Mapping)",
                     "observations: type(obs) is not dict and (not isinstance(obs, Mapping)) -> "
                     "type(obs) is not dict or not isinstance(obs, Mapping)")},
        # Shortcuts that only decide whether the plain way runs: turned off, the plain way runs
        # and finds the same (tests/unit/test_rules_equivalence.py compares the two).
        **{k: "the shortcut is no longer taken (a falsy _distinct, a set never a proper subset of {int}, a bound "
              "no integer meets): the seeds are read one by one, which gives the same"
           for k in ("_distinct: return len(set(seeds)) == len(seeds) -> return None",
                     "_distinct: return False -> return None",
                     "_seed_set: set(map(type, out)) <= {int} -> set(map(type, out)) < {int}",
                     "_seed_set: -INT_LIMIT -> INT_LIMIT")},
        "_seed_set: min(out) >= -INT_LIMIT -> min(out) > -INT_LIMIT":
            "a seed of exactly -2**63 leaves the shortcut for the plain reading, which keeps it too",
        "observations: False -> True (#2)":
            "every claim sent to the checks of repeats and run records, which find nothing in observations that "
            "name neither",
    },
    "rra_tools/validate/rules/levels.py": {
        "run_records: break -> continue":
            "past the cap every later file is skipped either way; break only stops listing sooner",
    },
    "rra_tools/validate/schema_layer.py": {
        "check_schema: values >= FAST_PATH_MIN_VALUES -> values > FAST_PATH_MIN_VALUES":
            "a document of exactly 20,000 values asks the compiled validator first or not: the same findings "
            "either way (only the time differs), and the test process has it loaded anyway",
        "cuttable_lists: 0 -> 1": "the minItems assumed when a list schema has none: 0 and 1 are both at most 1",
    },
    "rra_tools/validate/rules/references.py": {
        "__init__: False -> True": "_Suggestions.spent is set by every closest() before _ref reads it",
    },
    "rra_tools/io/read/blocklocate.py": {
        **{f"_value: 0 -> 1{n}": "the third member of a scalar's, flow sequence's or empty value's shape: only "
                                 "a block mapping's or sequence's (their column) is ever read"
           for n in ("", " (#2)")},
        **{k: "end = text.find('\\n', first) where first is the offset of a key (never a line break): found, "
              "end > first >= 0, so end < 0, end <= 0 and end < 1 agree"
           for k in ("_scan_keys: end < 0 -> end <= 0", "_scan_keys: 0 -> 1")},
        "_item_of_sequence: 0 -> 1": "the third member of a flow sequence item's shape (a scalar's): never read",
    },
    "rra_tools/io/read/jsonlocate.py": {
        "_member: len(members) < len(node) and key not in members -> len(members) < len(node) or key not in members":
            "keys (the data's keys in order) is only read inside the loop, which runs only while key is not in "
            "members, and there a list of every key answers as the empty one does when members are as many",
        "_member: True -> False": "an object read to its end not marked so: the loop breaks all the same, and a "
                                  "later call skips the last value again to find the same '}'",
        "_item: break -> continue": "after state[2] = True the loop's condition ends it either way",
        "_item: 0 -> 1 (#2)": "at < 0 or at < 1 where at is -1 or the offset of an item, past an opening bracket",
    },
}


@dataclass
class Mutant:
    """One change: where it is and what it does."""

    module: str
    index: int
    line: int
    function: str
    before: str
    after: str

    #: Set when the same change occurs more than once in one function: 2, 3, ...
    occurrence: int = 1

    @property
    def key(self) -> str:
        """Stable name of the mutant (line numbers move when the module changes)."""
        suffix = f" (#{self.occurrence})" if self.occurrence > 1 else ""
        return f"{self.function}: {self.before} -> {self.after}{suffix}"


_COMPARE_SWAPS: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
    ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}
_BINOP_SWAPS: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.FloorDiv: ast.Div,
    ast.Mod: ast.FloorDiv, ast.Pow: ast.Mult,
}


def _docstring_nodes(tree: ast.AST) -> set[int]:
    """ids of docstring expressions and of ``__all__``, which are not mutated."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            skip.update(id(n) for n in ast.walk(body[0]))
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            skip.update(id(n) for n in ast.walk(node))
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for n in ast.walk(node))
        if isinstance(node, ast.AnnAssign) and node.value is None:
            skip.update(id(n) for n in ast.walk(node))
    return skip


def _functions(tree: ast.AST) -> dict[int, str]:
    """id of every node -> the name of the innermost function (or class) around it."""
    owner: dict[int, str] = {}

    def visit(node: ast.AST, name: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else name
            owner[id(child)] = inner
            visit(child, inner)

    visit(tree, "<module>")
    return owner


def _changes(node: ast.AST) -> Iterator[ast.AST]:
    """Each mutated copy of ``node`` (one per operator that applies)."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE_SWAPS:
        new = copy.deepcopy(node)
        new.ops = [_COMPARE_SWAPS[type(node.ops[0])]()]
        yield new
    elif isinstance(node, ast.BoolOp):
        new = copy.deepcopy(node)
        new.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        yield new
    elif isinstance(node, ast.BinOp) and type(node.op) in _BINOP_SWAPS:
        if not (isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str)):
            new = copy.deepcopy(node)
            new.op = _BINOP_SWAPS[type(node.op)]()
            yield new
    elif isinstance(node, ast.AugAssign) and isinstance(node.op, (ast.Add, ast.Sub)):
        new = copy.deepcopy(node)
        new.op = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
        yield new
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
        yield copy.deepcopy(node.operand)
    elif isinstance(node, ast.Constant) and not isinstance(node.value, str):
        if isinstance(node.value, bool):
            yield ast.Constant(not node.value)
        elif isinstance(node.value, (int, float)):
            yield ast.Constant(node.value + 1)
    elif isinstance(node, ast.Continue):
        yield ast.Break()
    elif isinstance(node, ast.Break):
        yield ast.Continue()
    elif isinstance(node, ast.Return) and node.value is not None \
            and not (isinstance(node.value, ast.Constant) and node.value.value is None):
        yield ast.Return(ast.Constant(None))


def _mutation_points(tree: ast.AST) -> list[tuple[ast.AST, ast.AST]]:
    skip = _docstring_nodes(tree)
    return [(node, change) for node in ast.walk(tree) if id(node) not in skip for change in _changes(node)]


def mutants_of(module: str, source: str | None = None) -> list[Mutant]:
    """Every mutant of ``module`` (a path relative to the repository root; its text is ``source``,
    default: the file as it is now), in a fixed order."""
    tree = ast.parse(source if source is not None else (ROOT / module).read_text(encoding="utf-8"))
    owner = _functions(tree)
    found: list[Mutant] = []
    seen: dict[str, int] = {}
    for i, (node, change) in enumerate(_mutation_points(tree)):
        mutant = Mutant(module, i, getattr(node, "lineno", 0), owner.get(id(node), "<module>"),
                        ast.unparse(node).splitlines()[0], ast.unparse(change).splitlines()[0])
        seen[mutant.key] = mutant.occurrence = seen.get(mutant.key, 0) + 1
        found.append(mutant)
    return found


class _Replace(ast.NodeTransformer):
    def __init__(self, target: ast.AST, change: ast.AST) -> None:
        self.target, self.change = target, change

    def visit(self, node: ast.AST) -> ast.AST:
        if node is self.target:
            return ast.copy_location(self.change, node)
        return super().visit(node)


def mutated_source(module: str, index: int | None, source: str | None = None) -> str:
    """The module's source (``source``, default: the file as it is now) with mutant ``index``
    applied (None: unchanged, but unparsed the same way, so that the baseline and the mutants
    differ only by the mutation)."""
    tree = ast.parse(source if source is not None else (ROOT / module).read_text(encoding="utf-8"))
    if index is not None:
        node, change = _mutation_points(tree)[index]
        tree = _Replace(node, change).visit(tree)
        ast.fix_missing_locations(tree)
    return ast.unparse(tree) + "\n"


def _copy_tree(dest: Path) -> None:
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        source = ROOT / rel
        if source.is_file() or source.is_symlink():
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target, follow_symlinks=False)


def _write(target: Path, source: str) -> None:
    """Write a (mutated) module and drop its cached bytecode: a .pyc is checked against the
    source's mtime in whole seconds and its size, so a mutant written in the same second as the
    last one, at the same length, would otherwise run the last one's bytecode."""
    target.write_text(source, encoding="utf-8")
    for cached in (target.parent / "__pycache__").glob(f"{target.stem}.*.pyc"):
        cached.unlink()


def _run_tests(copy_root: Path, tests: list[str], timeout: float) -> tuple[str, float]:
    """'passed', 'failed' or 'timeout', and the seconds it took."""
    # Bytecode is written (each test starts many 'rra' processes; compiling the package afresh in
    # each one doubled a run): the mutated module's own cached bytecode is removed by _write.
    env = {**os.environ, "PYTHONPATH": str(copy_root)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    argv = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--no-header", *tests]
    start = time.monotonic()
    proc = subprocess.Popen(argv, cwd=copy_root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        code = None
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
    elapsed = time.monotonic() - start
    return ("timeout" if code is None else "passed" if code == 0 else "failed"), elapsed


def _sample(mutants: list[Mutant], limit: int, seed: int) -> list[Mutant]:
    if limit <= 0 or len(mutants) <= limit:
        return mutants
    chosen = sorted(random.Random(seed).sample(range(len(mutants)), limit))  # noqa: S311 - a sample, not a secret
    return [mutants[i] for i in chosen]


def run_module(module: str, limit: int, seed: int, timeout: float | None, log: bool = True,
               only: list[int] | None = None) -> dict[str, object]:
    """Run the (sampled, or ``only`` the numbered) mutants of ``module``; return its result as a
    JSON-able mapping."""
    # Test files another change has not brought yet are left out; '-k' also matches file names.
    tests = [t for t in MODULES[module] if not t.startswith("tests/") or (ROOT / t).exists()]
    # Read once: a module changed in the working tree during a long run (a rebase) must not
    # change which mutants the rest of the run makes.
    source = (ROOT / module).read_text(encoding="utf-8")
    everything = mutants_of(module, source)
    equivalent = EQUIVALENT.get(module, {})
    selected = [m for m in everything if m.index in only] if only else _sample(everything, limit, seed)
    results: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="rra-mutation-") as tmp:
        copy_root = Path(tmp)
        _copy_tree(copy_root)
        target = copy_root / module
        _write(target, mutated_source(module, None, source))
        status, base_seconds = _run_tests(copy_root, tests, timeout=1800)
        if status != "passed":
            raise SystemExit(f"{module}: the tests fail without any mutation ({status}); fix them first")
        limit_s = timeout or max(30.0, 3 * base_seconds + 10)
        if log:
            print(f"{module}: {len(everything)} mutants, {len(selected)} run; baseline {base_seconds:.1f} s, "
                  f"limit {limit_s:.0f} s per mutant", flush=True)
        for mutant in selected:
            if mutant.key in equivalent:
                results.append({**asdict(mutant), "status": "equivalent", "reason": equivalent[mutant.key]})
                continue
            _write(target, mutated_source(module, mutant.index, source))
            outcome, seconds = _run_tests(copy_root, tests, limit_s)
            status = "survived" if outcome == "passed" else "killed"
            results.append({**asdict(mutant), "status": status, "seconds": round(seconds, 1)})
            if log:
                # One line per mutant: a long run that is stopped still says what it found so far.
                print(f"  {status:<8}  #{mutant.index:<4} line {mutant.line:<4} {seconds:6.1f} s  {mutant.key}",
                      flush=True)
    killed = sum(r["status"] == "killed" for r in results)
    scored = sum(r["status"] != "equivalent" for r in results)
    return {"module": module, "mutants": len(everything), "run": len(selected), "killed": killed,
            "survived": scored - killed, "equivalent": len(results) - scored,
            "score": round(100.0 * killed / scored, 1) if scored else 100.0, "tests": tests, "results": results}


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, run (or list) the mutants, print the scores; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("modules", nargs="*", help=f"modules to mutate (default: {', '.join(MODULES)})")
    parser.add_argument("--max", type=int, default=40, help="mutants run per module, sampled (0: all)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the sample")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds per mutant (default: 3 x the unmutated run + 10, at least 30)")
    parser.add_argument("--mutant", type=int, action="append", default=None, metavar="N",
                        help="run only mutant number N (as --list numbers them; repeatable)")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--json", type=Path, default=None, help="write the results to this file")
    parser.add_argument("--fail-under", type=float, default=None, help="exit 1 when a module scores below this")
    args = parser.parse_args(argv)
    modules = args.modules or list(MODULES)
    unknown = [m for m in modules if m not in MODULES]
    if unknown:
        parser.error(f"no test selection for {', '.join(unknown)}; add it to MODULES in {Path(__file__).name}")
    if args.list:
        for module in modules:
            for m in _sample(mutants_of(module), args.max, args.seed):
                mark = "  (equivalent)" if m.key in EQUIVALENT.get(module, {}) else ""
                print(f"{module}:{m.line}  #{m.index}  {m.key}{mark}")
        return 0
    summary = [run_module(module, args.max, args.seed, args.timeout, only=args.mutant) for module in modules]
    print(f"\n{'module':<42} {'mutants':>7} {'run':>4} {'killed':>6} {'survived':>8} {'equiv':>5} {'score':>6}")
    for s in summary:
        print(f"{s['module']:<42} {s['mutants']:>7} {s['run']:>4} {s['killed']:>6} {s['survived']:>8} "
              f"{s['equivalent']:>5} {s['score']:>5.1f}%")
    if args.json is not None:
        args.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    if args.fail_under is not None and any(float(str(s["score"])) < args.fail_under for s in summary):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
