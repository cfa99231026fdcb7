#!/usr/bin/env python3
"""grader_units.py LABS — collgrade's own pieces, no MPI run: batch IDs that
cannot collide, gradebook cells safe in a spreadsheet, report text with no
control character, the report formats' shape, the allow list's groups."""
import csv
import io
import json
import os
import sys
import unittest
import xml.etree.ElementTree as ET

sys.path.insert(0, sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "labs"))
sys.dont_write_bytecode = True
from grader import batch, integrity, parts, report, util  # noqa: E402


class Ids(unittest.TestCase):
    def test_plain_names_kept(self):
        for n in ("alice", "a_b", "skel1", "late3", "same-name-1", "x.y"):
            self.assertEqual(batch.student_id(n), n)

    def test_no_two_names_share_an_id(self):
        names = ["a b", "a_b", "a?b", "a\nb", "a\rb", "A_b", "Alice", "alice", "zoë", "zo\udcff", "=cmd", "-x", ".x",
                 "a" * 300, "a" * 301, "o'brien", 'quote"d', "\x1b[2J", ""]
        names.append(batch.student_id("a b"))   # a folder named as another's ID
        ids = [batch.student_id(n) for n in names]
        self.assertEqual(len(set(ids)), len(ids), ids)
        self.assertEqual(len({i.lower() for i in ids}), len(ids), "IDs that differ in case only")

    def test_ids_are_safe_file_names(self):
        for n in ("a\nb", "../x", "/etc/passwd", "=1+2", "-rf", "\x00", "x" * 1000):
            i = batch.student_id(n)
            self.assertRegex(i, r"^[A-Za-z0-9_][A-Za-z0-9._+-]*$")
            self.assertLess(len(i), 120)


class Cells(unittest.TestCase):
    def read(self, cell):
        return next(csv.reader(io.StringIO(cell)))[0]

    def test_formulas_prefixed(self):
        for v in ("=HYPERLINK(\"x\")", "+1", "-1+2", "@SUM(A1)"):
            self.assertEqual(self.read(batch.csv_cell(v)), "'" + v)

    def test_quotes_and_controls(self):
        self.assertEqual(self.read(batch.csv_cell('say "hi", twice')), 'say "hi", twice')
        cell = batch.csv_cell("a\nb\x1b[2Jc\r")
        self.assertNotRegex(cell, "[\x00-\x1f\x7f]")
        self.assertEqual(self.read(cell), "a\\nb\\x1b[2Jc\\x0d")


class Text(unittest.TestCase):
    def test_escapes_shown(self):
        self.assertEqual(util.one_line("FAIL\x1b[2J\x1b[H 100/100\n"), "FAIL\\x1b[2J\\x1b[H 100/100\\n")
        self.assertEqual(util.clean("\x9b31m\x7f"), "\\x9b31m\\x7f")
        self.assertEqual(util.clip("a \n\t b", 3), "a b")


class Part:
    def __init__(self, name, kind, points):
        self.name, self.kind, self.points, self.opts = name, kind, points, {}

    def opt(self, k, d=""):
        return self.opts.get(k, d)


class FakeGrading:
    algos = ["my_ring"]

    def __init__(self):
        from grader.grading import Result
        self.results = [Result(Part("correctness", "check", 60), 60.0, "graded", "all pass\x1b[2J"),
                        Result(Part("integrity", "integrity", 20), 3.3, "graded", 'uses "x" & <y>'),
                        Result(Part("gpu", "check", 10), 0.0, "blocked", "needs a GPU")]
        self.total, self.max, self.partial = 63.3, 80, ["part gpu needs a GPU (none here)"]


class SpeedInterval(unittest.TestCase):
    """A speed whose interval spans a mark's line says review; one clear of
    both lines, or no interval printed, says nothing more."""

    def paired(self):
        part = Part("performance", "paired", 20)
        part.opts = {"full": "0.8", "zero": "0.4", "algo": "my_ring"}
        return parts.Paired(FakeGrading(), part)

    def test_review(self):
        k = self.paired()
        said = k.interval_review(["ratio 0.790 at 4194304 B interval 0.701 0.856 of 30 pairs", "60 passed, 0 failed"])
        self.assertIn("review: the 95 % interval of the 30 pairs, 0.701x to 0.856x, spans the full-marks line (0.8x), so the mark", said)
        self.assertIn("spans the full-marks line (0.8x) and the no-marks line (0.4x)", k.interval_review(["ratio 0.5 at 8 B interval 0.3 0.9 of 30 pairs"]))
        self.assertEqual(k.interval_review(["ratio 1.010 at 4194304 B interval 0.950 1.080 of 30 pairs"]), "")
        self.assertEqual(k.interval_review(["ratio 0.600 at 4194304 B interval 0.550 0.650 of 30 pairs"]), "")
        self.assertEqual(k.interval_review(["ratio 0.790 at 4194304 B"]), "")


class Reports(unittest.TestCase):
    def test_shapes(self):
        g = FakeGrading()
        j = json.loads(report.as_json(g, "01-ring", "my ring\n.c"))
        self.assertEqual(list(j), ["lab", "file", "algo", "total", "max", "partial", "partial_why", "parts"])
        self.assertEqual([list(p) for p in j["parts"]][0], ["name", "score", "max", "status", "detail"])
        self.assertTrue(j["partial"])
        s = json.loads(report.gradescope(g, "01-ring"))
        self.assertEqual([t["status"] for t in s["tests"]], ["passed", "failed", "failed"])
        self.assertEqual(s["tests"][2]["max_score"], 0)
        x = ET.fromstring(report.junit(g, "01-ring"))
        self.assertEqual((x.get("tests"), x.get("failures"), x.get("skipped")), ("3", "1", "1"))
        t = report.text(g)
        self.assertIn("  TOTAL              63.3 / 80   PARTIAL: part gpu needs a GPU (none here)", t)
        self.assertNotRegex(t, "\x1b")


class AllowList(unittest.TestCase):
    def test_groups(self):
        self.assertEqual(integrity.what_is("MPI_Allreduce"), "MPI")
        self.assertEqual(integrity.what_is("dl_iterate_phdr"), "dynamic loading or symbol tables")
        self.assertEqual(integrity.what_is("qsort"), "not on the allow list")
        self.assertTrue(integrity.voids_work("fork (processes)"))
        self.assertFalse(integrity.voids_work("open (files or the system)"))


if __name__ == "__main__":
    unittest.main(verbosity=1)
