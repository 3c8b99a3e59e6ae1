#!/usr/bin/env python3
"""Runs a test program with LeakSanitizer and refuses every leak but one:
CAF 0.17.6's BASP broker left alive at exit.

    scripts/leak-check.py -- PROGRAM [ARGS...]
    scripts/leak-check.py --self-test

Now and then CAF's BASP broker outlives a process's shutdown with everything
it holds (README, "LeakSanitizer and CAF's BASP broker"). This runs PROGRAM
with leak checks on and the reports in files (the worker processes it starts
write theirs there too), then reads every report. A report is the broker's
cycle, and passes, only if

  - every leak in it is indirect (a cycle, nothing outside it leaked that
    points in),
  - one of them is the broker itself (`make_actor<caf::io::basp_broker`),
  - and every frame of every allocation is CAF's: a function of `caf::`, a
    standard container of CAF's types, a frame in `libcaf_core` or
    `libcaf_io`, or an address the unwinder could not place (the standard
    library's allocating frames count as the named CAF function that
    called them). One frame of
    Prism's (a `prism::` function, a file of this repository), or of any
    other code, refuses the report. One kind of block is CAF's whoever
    spawned it: an actor's own storage, allocated by `caf::make_actor`,
    which a message in the broker's mailbox or a route of its tables keeps
    after the actor ended. What the actor's state allocated is judged frame
    by frame like any other leak.

Any other report fails the run and is printed whole, as is every report of
AddressSanitizer or UndefinedBehaviorSanitizer. The exit status is the
program's, or 1 if it passed but a report was refused.
"""

import os
import re
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LEAK_HEAD = re.compile(r"^(Direct|Indirect) leak of \d+ byte\(s\) in \d+ object")
FRAME = re.compile(r"^\s+#(\d+) 0x[0-9a-f]+ (.*)$")
BROKER = "make_actor<caf::io::basp_broker"
# An operator's name, whose signs are not template brackets or a parameter
# list: "operator()", "operator<<", "operator new[]".
OPERATOR = re.compile(r"operator\s*(\(\)|\[\]|new(\[\])?|delete(\[\])?|[^\w\s(]+)")
# An actor's own storage, allocated by CAF's template wherever it is
# instantiated: named in full, or, inlined, by its bare name in CAF's header.
ACTOR_STORAGE = re.compile(r"^in (\S+ )?caf::make_actor<"
                           r"|^in make_actor<.* /usr/include/caf/make_actor\.hpp:\d+$")


def frames(block):
    """The frames of one leak's allocation stack, without the allocator's."""
    out = []
    for line in block[1:]:
        m = FRAME.match(line)
        if not m:
            continue
        if m.group(1) == "0":
            continue  # operator new or malloc
        out.append(m.group(2))
    return out


def qualified_name(frame):
    """The qualified name of a named frame's function ("in SIGNATURE
    FILE:LINE"), without its return type and with its template arguments
    emptied: "caf::data_processor<>::apply<>" for a frame of
    "in std::enable_if<..., caf::error>::type
    caf::data_processor<caf::serializer>::apply<unsigned long>(unsigned
    long&) /usr/include/caf/data_processor.hpp:134". "" for a frame the
    symbolizer did not name, or one whose brackets do not pair."""
    if not frame.startswith("in "):
        return ""
    text, out, depth, i = frame[3:], [], 0, 0
    while i < len(text):
        operator = OPERATOR.match(text, i) if depth == 0 else None
        if operator and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            out.append(operator.group(0))
            i = operator.end()
            # "operator< <caf::x>": the template's arguments follow a space.
            while text.startswith(" <", i):
                i += 1
            continue
        if text.startswith("(anonymous namespace)", i):
            if depth == 0:
                out.append("(anonymous\0namespace)")
            i += len("(anonymous namespace)")
            continue
        c = text[i]
        if c == "<":
            if depth == 0:
                out.append("<")
            depth += 1
        elif c == ">":
            depth -= 1
            if depth < 0:
                return ""
            if depth == 0:
                out.append(">")
        elif depth == 0:
            if c == "(":
                # The parameter list: the name is the last word before it.
                words = "".join(out).split()
                return words[-1].replace("\0", " ") if words else ""
            out.append(c)
        i += 1
    return ""


def is_cafs(frame):
    """Whether a frame ("in FUNCTION FILE:LINE" or "(MODULE+0xOFFSET)") is
    CAF's own code."""
    if "prism" in frame or REPO in frame:
        return False
    if frame.startswith("in "):
        function = frame[3:]
        # A function of CAF's, whatever its return type.
        if qualified_name(frame).startswith("caf::"):
            return True
        if function.startswith(("std::", "void std::", "bool std::")) and "<caf::" in function:
            # A standard container of CAF's types: where it was compiled
            # decides, and it must be CAF's libraries.
            return "libcaf_" in frame
        return "libcaf_" in frame and "/usr/include/caf/" not in frame
    # "(MODULE+0xOFFSET)": a frame the symbolizer could not name, or an
    # address on a thread's stack, which holds no code: the fast unwinder's
    # guess past a frame of CAF's built without frame pointers.
    return ("libcaf_" in frame or "<unknown module>" in frame
            or "([stack]+" in frame)


def leaks(text):
    """The leak blocks of a LeakSanitizer report: each a list of lines."""
    blocks, current = [], None
    for line in text.splitlines():
        if LEAK_HEAD.match(line):
            current = [line]
            blocks.append(current)
        elif current is not None and line.strip().startswith("#"):
            current.append(line)
        else:
            current = None
    return blocks


def brokers_cycle(text):
    """Why `text` (one process's sanitizer log) is not only CAF's broker
    cycle; "" if it is."""
    if "ERROR: LeakSanitizer" not in text:
        return "a sanitizer report other than a leak"
    others = re.findall(r"ERROR: (\w+Sanitizer)", text)
    if any(o != "LeakSanitizer" for o in others):
        return "a sanitizer report other than a leak"
    blocks = leaks(text)
    if not blocks:
        return "a leak report without leaks"
    if not any(BROKER in line for b in blocks for line in b):
        return "leaks without CAF's BASP broker among them"
    for b in blocks:
        if b[0].startswith("Direct"):
            return "a direct leak: " + b[0]
        fs = frames(b)
        if fs and ACTOR_STORAGE.match(fs[0]):
            continue
        # The standard library's allocating frames (an allocator, a
        # vector growing) are their caller's when that caller is a CAF
        # function the symbolizer names; otherwise they are judged as they are.
        caller = 0
        while caller < len(fs) - 1 and qualified_name(fs[caller]).startswith(
                ("std::", "__gnu_cxx::")):
            caller += 1
        if caller > 0 and qualified_name(fs[caller]).startswith("caf::"):
            fs = fs[caller:]
        for f in fs:
            if not is_cafs(f):
                return "a leak allocated outside CAF: " + f
    return ""


def run(argv):
    logs = tempfile.mkdtemp(prefix="prism-leaks-")
    env = dict(os.environ)
    asan = env.get("ASAN_OPTIONS", "")
    # Leaks are reported but do not end the process with an error: this
    # script judges them. Every other error still aborts.
    extra = "detect_leaks=1:abort_on_error=1:exitcode=0:log_path=" + logs + "/report"
    env["ASAN_OPTIONS"] = (asan + ":" if asan else "") + extra
    status = subprocess.call(argv, env=env)
    refused = 0
    tolerated = 0
    for name in sorted(os.listdir(logs)):
        path = os.path.join(logs, name)
        with open(path, errors="replace") as f:
            text = f.read()
        why = brokers_cycle(text)
        if why:
            refused += 1
            print("leak-check: %s refused: %s" % (name, why))
            print(text)
        else:
            tolerated += 1
        os.remove(path)
    os.rmdir(logs)
    if tolerated:
        print("leak-check: %d report(s) of CAF's BASP broker cycle alone, "
              "tolerated" % tolerated)
    if status != 0:
        return status
    return 1 if refused else 0


def self_test():
    """The rule against reports it must pass and reports it must refuse."""
    here = os.path.join(REPO, "tests", "leaks")
    with open(os.path.join(here, "broker_cycle.txt")) as f:
        cycle = f.read()
    failures = []

    def with_leaks(blocks):
        """The broker's cycle with `blocks` (leaks) added among its own."""
        return cycle.replace("\nIndirect leak", "\n" + blocks + "Indirect leak", 1)

    def expect(name, text, passes):
        why = brokers_cycle(text)
        if (why == "") != passes:
            failures.append("%s: %s" % (name, why or "passed"))

    expect("the broker's cycle", cycle, True)
    # The same report with one leak made direct.
    expect("a direct leak", cycle.replace("Indirect leak", "Direct leak", 1), False)
    # One allocation of Prism's among the broker's.
    prism_block = (
        "Indirect leak of 64 byte(s) in 1 object(s) allocated from:\n"
        "    #0 0x7fd9b94b94c8 in operator new(unsigned long) "
        "../../../../src/libsanitizer/asan/asan_new_delete.cpp:95\n"
        "    #1 0x2b1c3f0 in prism::actors::owner_state::hold(prism::object_id) "
        + REPO + "/actors/owner/owner.cpp:80\n"
        "    #2 0x7fd9b7d1a2ce  (/lib/x86_64-linux-gnu/libcaf_io.so.0.17.6+0x1132ce)\n\n")
    expect("a leak of Prism's held by the broker",
           with_leaks(prism_block), False)
    # Code of neither: the standard library's own allocation.
    std_block = prism_block.replace(
        "prism::actors::owner_state::hold(prism::object_id) " + REPO + "/actors/owner/owner.cpp:80",
        "std::vector<int>::_M_realloc_insert(int&&) /usr/include/c++/12/bits/vector.tcc:440")
    expect("a leak of another library's code",
           with_leaks(std_block), False)
    # A frame past CAF's on a thread's stack: the unwinder's guess.
    stack_block = (
        "Indirect leak of 32 byte(s) in 1 object(s) allocated from:\n"
        "    #0 0x7f39bd8b94c8 in operator new(unsigned long) "
        "../../../../src/libsanitizer/asan/asan_new_delete.cpp:95\n"
        "    #1 0x7f39bbd714f6 in caf::error::error(unsigned char, caf::atom_value) "
        "(/lib/x86_64-linux-gnu/libcaf_core.so.0.17.6+0x1714f6)\n"
        "    #2 0x7fff2367e9ff  ([stack]+0x1b9ff)\n\n")
    expect("a frame on a thread's stack",
           with_leaks(stack_block), True)
    # A buffer a CAF serializer instantiated in Prism's program grows: the
    # standard library's frames first, then CAF's. With a Prism caller
    # instead it is Prism's.
    vector_block = (
        "Indirect leak of 1024 byte(s) in 1 object(s) allocated from:\n"
        "    #0 0x7effafab94c8 in operator new(unsigned long) "
        "../../../../src/libsanitizer/asan/asan_new_delete.cpp:95\n"
        "    #1 0x20a6570 in std::__new_allocator<char>::allocate(unsigned long, void const*) "
        "/usr/include/c++/12/bits/new_allocator.h:137\n"
        "    #2 0x20a6570 in std::_Vector_base<char, std::allocator<char> >::_M_allocate"
        "(unsigned long) /usr/include/c++/12/bits/stl_vector.h:378\n"
        "    #3 0x20a727f in caf::serializer_impl<std::vector<char, std::allocator<char> > >"
        "::apply_raw(unsigned long, void*) /usr/include/caf/serializer_impl.hpp:120\n"
        "    #4 0x7effaeba25f8 in caf::node_id::default_data::serialize(caf::serializer&) const "
        "(/lib/x86_64-linux-gnu/libcaf_core.so.0.17.6+0x1a25f8)\n\n")
    expect("a buffer CAF's serializer grows", with_leaks(vector_block), True)
    expect("a buffer Prism's code grows",
           with_leaks(vector_block.replace(
               "caf::serializer_impl<std::vector<char, std::allocator<char> > >"
               "::apply_raw(unsigned long, void*) /usr/include/caf/serializer_impl.hpp:120",
               "prism::actors::encode(int) " + REPO + "/framework/src/value.cpp:10")),
           False)
    # CAF's serializer writing a BASP header, instantiated in Prism's
    # program: functions of CAF's whose return types are written with spaces
    # ("std::enable_if<..., caf::error>::type") or deduced ("auto").
    header_block = (
        "Indirect leak of 32 byte(s) in 1 object(s) allocated from:\n"
        "    #0 0x7f27ff8b94c8 in operator new(unsigned long) "
        "../../../../src/libsanitizer/asan/asan_new_delete.cpp:95\n"
        "    #1 0xd06af2 in std::_Vector_base<char, std::allocator<char> >::_M_allocate"
        "(unsigned long) /usr/include/c++/12/bits/stl_vector.h:378\n"
        "    #2 0xcdc560 in caf::serializer_impl<std::vector<char, std::allocator<char> > >"
        "::apply_raw(unsigned long, void*) /usr/include/caf/serializer_impl.hpp:120\n"
        "    #3 0xc99f32 in std::enable_if<std::is_integral<unsigned long>::value&&"
        "(!std::is_same<bool, unsigned long>::value), caf::error>::type "
        "caf::data_processor<caf::serializer>::apply<unsigned long>(unsigned long&) "
        "/usr/include/caf/data_processor.hpp:134\n"
        "    #4 0xef0450 in auto caf::data_processor<caf::serializer>::operator()"
        "<caf::meta::type_name_t, unsigned char&>(caf::meta::type_name_t, unsigned char&) "
        "/usr/include/caf/data_processor.hpp:200\n"
        "    #5 0xed2302 in caf::serializer::result_type caf::io::basp::inspect"
        "<caf::serializer>(caf::serializer&, caf::io::basp::header&) "
        "/usr/include/caf/io/basp/header.hpp:88\n"
        "    #6 0x7f27ff705df0 in caf::io::basp::instance::write(caf::execution_unit*, "
        "std::vector<char, std::allocator<char> >&, caf::io::basp::header&, "
        "caf::callback<caf::serializer&>*) (/lib/x86_64-linux-gnu/libcaf_io.so.0.17.6+0xfedf0)\n\n")
    expect("a BASP header CAF's serializer writes", with_leaks(header_block), True)
    expect("a function of another library's returning CAF's type",
           with_leaks(header_block.replace(
               "caf::data_processor<caf::serializer>::apply<unsigned long>(unsigned long&) "
               "/usr/include/caf/data_processor.hpp:134",
               "boost::apply<unsigned long>(unsigned long&) /usr/include/boost/apply.hpp:1")),
           False)
    for frame, name in [
            ("in std::enable_if<(N<2), caf::error>::type caf::f<1>(int) x.hpp:1", ""),
            ("in caf::actor::operator<<(int) /usr/include/caf/actor.hpp:1", "caf::actor::operator<<"),
            ("in void (anonymous namespace)::g() a.cpp:1", "(anonymous namespace)::g"),
            ("in bool caf::operator< <caf::x>(caf::x const&) b.hpp:2", "caf::operator<<>"),
            ("  (/lib/x86_64-linux-gnu/libcaf_io.so.0.17.6+0x1132ce)", "")]:
        if qualified_name(frame) != name:
            failures.append("the name of %r: %r" % (frame, qualified_name(frame)))
    # The storage of an actor of Prism's that ended, kept by the cycle (a
    # message it sent in the broker's mailbox), passes; what its state
    # allocated does not.
    actor_block = (
        "Indirect leak of 2256 byte(s) in 1 object(s) allocated from:\n"
        "    #0 0x7f5b1f0b94c8 in operator new(unsigned long) "
        "../../../../src/libsanitizer/asan/asan_new_delete.cpp:95\n"
        "    #1 0x197b754 in caf::actor caf::make_actor<caf::stateful_actor<"
        "prism::actors::owner_internal::owner_state, caf::event_based_actor>, "
        "caf::actor, caf::actor_config&>(unsigned long, caf::node_id, "
        "caf::actor_system*, caf::actor_config&) /usr/include/caf/make_actor.hpp:49\n"
        "    #2 0x166d3c6 in prism::actors::spawn_owner(caf::actor_system&, "
        "prism::actors::owner_config) " + REPO + "/actors/owner/owner.cpp:134\n\n")
    expect("an ended actor's storage held by the broker",
           with_leaks(actor_block), True)
    # The same, inlined: the symbolizer names the template without its
    # namespace, in CAF's header.
    inlined_block = (
        "Indirect leak of 1096 byte(s) in 1 object(s) allocated from:\n"
        "    #0 0x7f10e68b94c8 in operator new(unsigned long) "
        "../../../../src/libsanitizer/asan/asan_new_delete.cpp:95\n"
        "    #1 0x1c0a5d5 in make_actor<caf::stateful_actor<prism::actors::"
        "(anonymous namespace)::door_state> > /usr/include/caf/make_actor.hpp:49\n"
        "    #2 0x1c0a5d5 in prism::actors::spawn_worker_door(caf::actor_system&) "
        + REPO + "/actors/raylet/raylet.cpp:203\n\n")
    expect("an ended actor's storage, inlined, held by the broker",
           with_leaks(inlined_block), True)
    expect("a template of that name outside CAF's header",
           with_leaks(inlined_block.replace("/usr/include/caf/make_actor.hpp",
                                             REPO + "/actors/make_actor.hpp")),
           False)
    expect("an actor's storage with its state's allocation",
           with_leaks(actor_block + prism_block),
           False)
    # Leaks without the broker are not its cycle.
    without = "\n".join(l for l in cycle.splitlines() if BROKER not in l and "named_broker" not in l)
    expect("a cycle without the broker", without, False)
    # An error of AddressSanitizer is never tolerated.
    expect("a heap-use-after-free", "==1==ERROR: AddressSanitizer: heap-use-after-free\n", False)
    for f in failures:
        print("leak-check self-test: wrong verdict for " + f)
    if not failures:
        print("leak-check self-test: every verdict right")
    return 1 if failures else 0


def main():
    args = sys.argv[1:]
    if args == ["--self-test"]:
        return self_test()
    if not args or args[0] != "--" or len(args) < 2:
        print(__doc__)
        return 2
    return run(args[1:])


if __name__ == "__main__":
    sys.exit(main())
