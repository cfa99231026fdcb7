"""The reports of one grading: text (the terminal), JSON, JUnit and
Gradescope's autograder format. Every text a student's file or program can
reach (a file name, a checker's line) is written with its control characters
as escapes: no report redraws a terminal or breaks a line."""
import json

from .util import clean, one_line, fmt1


def jstr(text):
    return json.dumps(one_line(text), ensure_ascii=False)


def xstr(text):
    t = one_line(text)
    return t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def limits(g):
    """The sandbox's limits the grading's runs reached (a key of its own in
    the JSON report, there only when one was)."""
    return getattr(g, "limits", [])


def text(g):
    """The lines printed at the end of a grading: a score per part, the total."""
    out = []
    for r in g.results:
        st = "blocked" if r.state == "blocked" else "%s / %d" % (fmt1(r.score), r.max)
        out.append("  %-14s %13s   %s" % (r.name, st, one_line(r.detail)))
    total = "%s / %d" % (fmt1(g.total), g.max)
    if g.partial:
        out.append("  %-14s %13s   PARTIAL: %s" % ("TOTAL", total, one_line("; ".join(g.partial))))
    else:
        out.append("  %-14s %13s" % ("TOTAL", total))
    if limits(g):
        out.append("  %-14s %13s   %s" % ("LIMITS", "reached", one_line("; ".join(limits(g)))))
    return "\n".join(out) + "\n"


def as_json(g, lab, file_shown):
    head = '{"lab": %s, "file": %s, "algo": %s, "total": %s, "max": %d, "partial": %s, "partial_why": %s, %s"parts": [' % (
        jstr(lab), jstr(file_shown), jstr(" ".join(g.algos)), fmt1(g.total), g.max,
        "true" if g.partial else "false", jstr("; ".join(g.partial)),
        '"limits": [%s], ' % ", ".join(jstr(w) for w in limits(g)) if limits(g) else "")
    parts = ['\n  {"name": %s, "score": %s, "max": %d, "status": "%s", "detail": %s}' % (
        jstr(r.name), fmt1(r.score), r.max, r.state, jstr(r.detail)) for r in g.results]
    return head + ",".join(parts) + "\n]}\n"


def gradescope(g, lab):
    """Gradescope's autograder format: the score, a text, and one test per part."""
    why = "; ".join(g.partial)
    lim = "; ".join(limits(g))
    head = '{"score": %s, "output": %s, "tests": [' % (
        fmt1(g.total), jstr("lab %s: %s / %d%s%s" % (lab, fmt1(g.total), g.max, " (PARTIAL: %s)" % why if why else "",
                                                      " (LIMITS reached: %s)" % lim if lim else "")))
    tests = []
    for r in g.results:
        blocked = r.state == "blocked"
        tests.append('\n  {"name": %s, "score": %s, "max_score": %d, "status": "%s", "output": %s}' % (
            jstr(r.name), fmt1(r.score), 0 if blocked else r.max, "passed" if not blocked and r.full() else "failed",
            jstr("%s: %s" % (r.state, r.detail))))
    return head + ",".join(tests) + "\n]}\n"


def gradescope_zero(note):
    return '{"score": 0.0, "output": %s, "tests": []}\n' % jstr(note)


def junit(g, lab):
    failing = [r for r in g.results if r.state != "blocked" and not r.full()]
    blocked = [r for r in g.results if r.state == "blocked"]
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           '<testsuite name="collgrade.%s" tests="%d" failures="%d" skipped="%d">' % (
               xstr(lab), len(g.results), len(failing), len(blocked))]
    for r in g.results:
        body = ""
        if r.state == "blocked":
            body = '<skipped message="%s"/>' % xstr(r.detail)
        elif not r.full():
            body = '<failure message="%s / %d: %s"/>' % (fmt1(r.score), r.max, xstr(r.detail))
        out.append('  <testcase classname="%s" name="%s">%s</testcase>' % (xstr(lab), xstr(r.name), body))
    out.append("</testsuite>")
    return "\n".join(out) + "\n"


def clean_text(t):
    return clean(t)
