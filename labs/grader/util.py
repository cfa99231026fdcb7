"""Small things every module uses: how collgrade stops, and text made safe."""
import os
import re
import sys


class Stop(Exception):
    """collgrade stops here with a message and an exit status."""

    def __init__(self, message, status=2):
        Exception.__init__(self, message)
        self.status = status


def die(message):
    raise Stop("collgrade: " + message)


def say(message):
    """A line for the person at the terminal (stderr), made safe."""
    sys.stderr.write(clean(message) + "\n")
    sys.stderr.flush()


# Control characters (C0, DEL, C1) and bytes that are no UTF-8 (read with
# surrogateescape): shown as escapes, so that no name or program output can
# move the cursor, clear the screen or redraw a line of the report.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\udc80-\udcff]")


def _escape(m):
    c = m.group(0)
    code = ord(c)
    if 0xDC80 <= code <= 0xDCFF:
        return "\\x%02x" % (code - 0xDC00)
    return "\\x%02x" % code


def clean(text):
    """TEXT with tabs as spaces, newlines kept, and every other control
    character (escape sequences included) written as \\xNN."""
    return _CONTROL.sub(_escape, text.replace("\t", " "))


def one_line(text):
    """clean, on one line (a name with a newline in it stays one line)."""
    return clean(text).replace("\r", "\\r").replace("\n", "\\n")


def clip(text, n=400):
    """TEXT on one line, runs of white space as one space, at most N characters."""
    return " ".join(clean(text).split())[:n]


def fmt1(x):
    """A score as the report writes it: one decimal."""
    return "%.1f" % x


def short_g(x):
    """A number as awk prints it (%.6g): 10, 10.5."""
    return "%.6g" % x


LOG_CAP = 32 << 20


def read_text(path):
    """A log's text (undecodable bytes replaced); a log over 64 MB is read as
    its first and last 32 MB, which hold what the verdicts look for."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            if size <= 2 * LOG_CAP:
                data = f.read()
            else:
                data = f.read(LOG_CAP) + b"\n"
                f.seek(size - LOG_CAP)
                data += f.read()
    except OSError:
        return ""
    return data.decode("utf-8", "replace")


def read_lines(path):
    """A log's lines, split at newlines only (as grep reads them)."""
    return read_text(path).split("\n")
