"""Integrity: an allow list, on the object code.

The names the student's object files use must be on labs/allowed-symbols.txt
(or the lab's allow =); the object code itself is read too (system-call
instructions, writable code, an executable stack, the ELF magic, a global that
replaces the program's own, start-up and exit code). nm, objdump and readelf
print what is there; this module reads their output.
"""
import fnmatch
import glob
import os
import re
import subprocess

from .util import die


def tool(cmd, timeout=300):
    """CMD's standard output as text (nothing when it cannot run)."""
    try:
        return subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              timeout=timeout).stdout.decode("utf-8", "replace")
    except (OSError, subprocess.TimeoutExpired):
        return ""


class AllowList:
    def __init__(self, path, extra):
        self.words = []
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                for line in f:
                    self.words += line.split("#", 1)[0].split()
        except OSError:
            die("cannot read the allow list %s" % path)
        self.words += extra

    def allowed(self, name):
        for w in self.words:
            if w.endswith("*"):
                if name.startswith(w[:-1]):
                    return True
            elif name == w:
                return True
        return False


# Why a name that is not allowed is forbidden, in a few words (shell globs).
WHAT_IS = [
    ("MPI", "[Pp][Mm][Pp][Ii]_* [Mm][Pp][Ii]*_* MPL_* ompi_* opal_* orte_* oshmem_* mca_* pmix_* PMIx_* prte_*"),
    ("CUDA/NCCL", "cuda* cu[A-Z]* nccl* __cuda*"),
    ("dynamic loading or symbol tables", "dl* _dl_* __libc_dl* _DYNAMIC __ehdr_start _r_debug getauxval "
     "__executable_start _etext _edata _end __data_start environ __environ"),
    ("threads", "pthread_* thrd_* mtx_* cnd_* clone* __clone* sem_* omp_* GOMP_*"),
    ("signals", "signal sigaction sig* raise kill alarm setitimer timer_* pause"),
    ("processes", "fork vfork _Fork exec* fexecve system popen posix_spawn* wait waitpid wait3 wait4 waitid setsid "
     "daemon prctl ptrace"),
    ("a raw system call", "syscall __syscall*"),
    ("code that runs after the checker (an exit handler)", "atexit at_quick_exit on_exit __cxa_atexit "
     "__cxa_thread_atexit* __cxa_finalize"),
    ("memory mapped or made executable at run time", "mprotect pkey_mprotect pkey_alloc mmap* mremap memfd_create __mmap*"),
    ("files or the system", "open* fopen* freopen* fdopen fclose close creat* read unlink* rename* remove pread* readv "
     "write pwrite* writev opendir readlink* stat* lstat* fstat* access __open* __xstat* socket connect"),
    ("the library's internals", "ck_* collbench_* collcheck_* tagtrain_* ckpt_*"),
]


def what_is(name):
    for why, globs in WHAT_IS:
        if any(fnmatch.fnmatchcase(name, g) for g in globs.split()):
            return why
    return "not on the allow list"


# What can do or fake the graded work itself: then no result the program
# produced can be trusted, and every part that ran it scores 0. Signals too:
# a handler (a timer's) runs wherever the program is, in the library's timed
# calls as well. A C library call merely not on the list ("not on the allow
# list", files) costs the integrity points only.
VOIDING = ["MPI", "signals", "code that runs after the checker (an exit handler)",
           "memory mapped or made executable at run time", "CUDA/NCCL", "dynamic loading or symbol tables", "threads",
           "processes", "a raw system call", "the library's internals", "a definition that replaces the program's own",
           "a system call written as an instruction", "reads ELF headers or symbol tables at run time",
           "code that runs before or after the checker (a constructor or destructor)",
           "a section both writable and executable"]


def voids_work(verdict):
    return any("(%s)" % why in verdict for why in VOIDING)


def defined_names(text):
    """The names of nm's 'ADDRESS TYPE NAME' lines, without a version (@...)."""
    names = set()
    for line in text.split("\n"):
        f = line.split()
        if len(f) == 3:
            names.add(f[2].split("@", 1)[0])
    return names


def library_symbols(prog, bin_dir):
    """Every name the rest of the program defines (the shared libraries it
    loads, the library's own archives), and apart the library's own globals
    (its checker's, benchmark's and trainer's too, whatever their prefix)."""
    libs = []
    for line in tool(["ldd", prog]).split("\n"):
        f = line.split()
        if len(f) >= 3 and f[1] == "=>" and f[2].startswith("/"):
            libs.append(f[2])
    archives = sorted(glob.glob(os.path.join(bin_dir, "..", "lib", "*.a")))
    libsyms = set()
    if libs:
        libsyms |= defined_names(tool(["nm", "-D", "--defined-only"] + libs))
    if archives:
        libsyms |= defined_names(tool(["nm", "--defined-only"] + archives))
        libown = {line.split()[2] for line in tool(["nm", "-g", "--defined-only"] + archives).split("\n")
                  if len(line.split()) == 3}
    else:
        libown = set()
    return libsyms, libown


def undefined(objs):
    """The names the object files use (nm -u), without a version."""
    out = tool(["nm", "-A", "-u"] + objs)
    return sorted({line.split()[-1].split("@", 1)[0] for line in out.split("\n") if line.split()})


def function_calls(disasm, fn):
    """In objdump -dr's text, function FN: its instruction count, whether it
    jumps through a pointer, and the targets of its calls and jumps."""
    on, insns, indirect, targets, jump = False, 0, False, [], False
    head = re.compile(r"^[0-9a-f]+ <" + re.escape(fn) + r">:$")
    for line in disasm.split("\n"):
        if head.match(line):
            on = True
            continue
        if on and re.match(r"^[0-9a-f]+ <", line):
            on = False
        if not on:
            continue
        if re.match(r"^ +[0-9a-f]+:\t", line):
            insns += 1
            jump = bool(re.search(r"\t(call|jmp|bl|b)[a-z.]*[ \t]", line))
            if re.search(r"\t(call|jmp)[a-z]* +\*|\t(blr|br)\t", line):
                indirect = True
        if re.search(r" R_[A-Z0-9_]+\t", line) and jump:
            targets.append(re.sub(r"[-+]0x[0-9a-f]+$", "", line.split()[-1]))
    return insns, indirect, targets


def sanitizer_only(disasm, fn):
    """FN is short, calls something, and calls only the sanitizers' runtime,
    never through a pointer."""
    insns, indirect, targets = function_calls(disasm, fn)
    return (0 < insns <= 32 and targets and not indirect
            and all(re.match(r"__(asan|ubsan|tsan|sanitizer)_", t) for t in targets))


def init_sections(obj):
    """The entries of .init_array and .fini_array (8 B each on 64-bit targets),
    and the names of the other start and exit sections."""
    ninit, nfini, other = 0, 0, []
    for line in tool(["readelf", "-SW", obj]).split("\n"):
        f = re.sub(r"^ *\[ *[0-9]*\] *", "", line).split()
        if len(f) < 5:
            continue
        named = re.match(r"^\.(init_array|fini_array|preinit_array|ctors|dtors|init|fini)(\.|$)", f[0])
        if not named and f[1] not in ("INIT_ARRAY", "FINI_ARRAY", "PREINIT_ARRAY"):
            continue
        try:
            size = int(f[4], 16)
        except ValueError:
            size = 0
        if f[0].startswith(".init_array"):
            ninit += size // 8
        elif f[0].startswith(".fini_array"):
            nfini += size // 8
        else:
            other.append(f[0])
    return ninit, nfini, other


def startup_code(obj):
    """Nothing when OBJ's only start-up and exit code is CK_REGISTER_ALGO's (or
    CK_REGISTER_SAVER's) registration, else what there is."""
    ninit, nfini, other = init_sections(obj)
    if other:
        return "section(s) " + " ".join(other)
    syms = [line.split() for line in tool(["nm", obj]).split("\n")]
    syms = [f for f in syms if len(f) == 3]
    # A GNU indirect function's resolver runs while the program is loaded.
    ifuncs = [f[2] for f in syms if f[1] == "i"]
    if ifuncs:
        return "the indirect function(s) %s (a resolver runs while the program is loaded)" % " ".join(ifuncs)
    regs = [f[2] for f in syms if f[1] in ("t", "T") and f[2].startswith("ck_register_")]
    disasm = tool(["objdump", "-dr", "--no-show-raw-insn", obj])
    # A sanitizer's module constructor and destructor: counted only when all
    # the function does is call the sanitizer's runtime.
    nctor = sum(1 for f in syms if f[1] == "t" and re.fullmatch(r"_sub_I_[0-9]+_[0-9]+|[a-z]+\.module_ctor", f[2])
                and sanitizer_only(disasm, f[2]))
    ndtor = sum(1 for f in syms if f[1] == "t" and re.fullmatch(r"_sub_D_[0-9]+_[0-9]+|[a-z]+\.module_dtor", f[2])
                and sanitizer_only(disasm, f[2]))
    if ninit > len(regs) + nctor:
        return "%d constructor(s) of its own" % (ninit - len(regs) - nctor)
    if nfini > ndtor:
        return "%d destructor(s)" % (nfini - ndtor)
    # Each registration function: a few instructions, and its one call is the registry's.
    for fn in regs:
        insns, indirect, targets = function_calls(disasm, fn)
        bad = " an indirect call" if indirect else ""
        bad += "".join(" a call of " + t for t in targets
                       if not re.match(r"^ck_register_(algo|saver|schedule)_or_exit$", t) and not re.match(r"^__(asan|ubsan)_", t))
        if insns > 16:
            return "%s has %d instructions (a registration has a few)" % (fn, insns)
        if bad:
            return "%s makes%s" % (fn, bad)
    return ""


def section_flags(obj):
    """(name, flags) of every section readelf -SW lists."""
    out = []
    for line in tool(["readelf", "-SW", obj]).split("\n"):
        if "] " not in line:
            continue
        f = line.split()
        if len(f) >= 4:
            name = line.split("] ", 1)[1].split()
            out.append((name[0] if name else "", f[-4]))
    return out


def elf_magic(obj):
    if re.search(r"\$0x464c457f\b", tool(["objdump", "-d", obj]), re.I):
        return True
    rows = [line[6:42] for line in tool(["objdump", "-s", obj]).split("\n") if not line.startswith("Contents")]
    return "7f454c46" in "".join(rows).replace(" ", "").replace("\n", "").lower()


def object_code(obj, group):
    """What the object code itself holds, added to GROUP (why: what)."""
    # System calls written as instructions (inline asm): the object code, not only its symbols.
    m = re.search(r"\s(syscall|sysenter|int +\$0x80|svc +#?0x?0*)(\s|$)", tool(["objdump", "-d", obj]), re.M)
    if m:
        group["a system call written as an instruction"] = " ".join(m.group(0).split())
    # The ELF magic: the program would find and read the loaded objects' headers itself.
    if elf_magic(obj):
        group["reads ELF headers or symbol tables at run time"] = "the ELF magic"
    why = startup_code(obj)
    if why:
        group["code that runs before or after the checker (a constructor or destructor)"] = why
    flags = section_flags(obj)
    # Code in a writable section could be made at run time.
    if any("W" in fl and "X" in fl for _, fl in flags):
        group["a section both writable and executable"] = "code written at run time"
    # So could code on the stack, when the file asks for an executable one.
    if any(name == ".note.GNU-stack" and "X" in fl for name, fl in flags):
        group["a section both writable and executable"] = (
            "an executable stack (a .note.GNU-stack section flagged x, or a nested function whose address is taken): "
            "code written on it would run")


REPLACES = re.compile(r"^(ck_|collbench_|collcheck_|tagtrain_|ckpt_|[Pp]?[Mm][Pp][Ii]_|main$|_start$|_init$|_fini$)")


def verdict(objs, allow, libsyms, libown):
    """Nothing when the object files keep to the allow list; otherwise what
    they use, grouped by why it is forbidden."""
    group = {}

    def add(why, what):
        group[why] = (group[why] + " " + what) if why in group else what
    for sym in undefined(objs):
        if allow.allowed(sym):
            continue
        add("the library's internals" if sym in libown else what_is(sym), sym)
    # A global the file defines under a name the program already has would
    # replace it for the whole program: memcmp that always says "equal".
    defs = sorted({line.split()[2] for line in tool(["nm", "-A", "-g", "--defined-only"] + objs).split("\n")
                   if len(line.split()) == 3})
    for d in defs:
        if allow.allowed(d) or REPLACES.match(d) or d in libsyms:
            add("a definition that replaces the program's own", d)
    for o in objs:
        object_code(o, group)
    return "; ".join("%s (%s)" % (what, why) for why, what in group.items())


def save_forbidden(objs):
    """Lab 06: what its save may not use, beyond the allow list, and why."""
    syms = [s for s in undefined(objs) if s != "ck_register_saver_or_exit"]
    rules = [
        ("fopen|fopen64|fdopen|freopen|freopen64|fwrite|fwrite_unlocked|fclose|tmpfile|tmpfile64",
         "stdio buffers the data and hides each call's short writes and errors from the save: use open, write, fsync, close"),
        ("syscall|writev|pwritev|pwritev64|pwritev2|pwritev64v2|mmap|mmap64|sendfile|sendfile64|copy_file_range|splice|"
         "renameat2|truncate|truncate64|link|linkat|mkstemp|mkstemp64|mkostemp|mkostemp64|mkstemps|mkostemps|__real_.*|__wrap_.*",
         "this lab's save is written with open, write, fsync, rename"),
        ("system|popen|posix_spawn|posix_spawnp|fork|vfork|clone|execl|execle|execlp|execv|execve|execvp|execvpe|fexecve",
         "another program would write the file out of the harness's sight"),
        ("ckpt_.*|ck_.*|tagtrain_.*|collbench_.*|collcheck_.*", "the library's own code, its checkpoint writer included: write the save yourself"),
    ]
    bad = []
    for names, why in rules:
        hit = [s for s in syms if re.fullmatch("(%s)" % names, s)]
        if hit:
            bad.append("%s (%s)" % (" ".join(hit), why))
    return bad
