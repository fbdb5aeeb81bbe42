#!/usr/bin/env python3
"""Regenerates the demangler's test data from the shared corpus.

synthetic.txt: the names of synthetic_names.txt (one of each construct of the
grammar) with llvm-undname-22's answers.

undname.txt.gz: every MSVC decorated name in the corpus's PDBs (publics,
globals, module symbols; llvm-pdbutil-22) and PE exports (llvm-readobj-22)
and in the reference symbol files, with llvm-undname-22's answer:
"decorated<TAB>demangled" (or "decorated<TAB>!error" when it fails).

mozilla.txt.gz: decorated PDB publics paired with the PUBLIC record Mozilla's
dump_syms wrote at the same address (dump_syms_regtest64.pdb and
basic32-min.pdb, whose references are in mozilla-dump_syms/windows), when
exactly one decorated public sits at that address.

Run from this directory: ./gen.py [CORPUS] (default ../../../../shared/corpus).
"""
import glob, gzip, os, re, subprocess, sys

corpus = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../../shared/corpus")
here = os.path.dirname(os.path.abspath(__file__))

def run(*args):
    return subprocess.run(args, capture_output=True, text=True, errors="replace").stdout

def gztext(fname):
    """A reproducible gzip text file (no time stamp)."""
    import io
    raw = open(os.path.join(here, fname), "wb")
    return io.TextIOWrapper(gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0), encoding="utf-8")

names = set()
for pdb in glob.glob(os.path.join(corpus, "windows/*/*.pdb")):
    for n in re.findall(r"`(\?[^`]*)`", run("llvm-pdbutil-22", "dump", "-publics", "-globals", "-symbols", pdb)):
        names.add(n)
for pe in glob.glob(os.path.join(corpus, "windows/*/*.dll")) + glob.glob(os.path.join(corpus, "windows/*/*.exe")):
    for n in re.findall(r"Name: (\?\S*)", run("llvm-readobj-22", "--coff-exports", pe)):
        names.add(n)
for sym in glob.glob(os.path.join(corpus, "mozilla-dump_syms/windows/*.sym")) + glob.glob(os.path.join(corpus, "windows/*/*.sym")):
    with open(sym, errors="replace") as f:
        for line in f:
            if line.startswith(("PUBLIC", "FUNC")):
                for tok in line.split()[3:]:
                    if tok.startswith("?") and "@" in tok:
                        names.add(tok)
names = sorted(n for n in names if "\t" not in n and "\n" not in n)
with open(os.path.join(here, "synthetic_names.txt")) as f:
    synthetic = [l.strip() for l in f if l.strip()]

res = subprocess.run(["llvm-undname-22"], input="\n".join(names + synthetic) + "\n", capture_output=True, text=True, errors="replace").stdout
# llvm-undname echoes each input line, then the result (or "error: ..."), then a blank line.
blocks = res.split("\n\n")
answers = {}
for b in blocks:
    lines = b.strip("\n").split("\n")
    if len(lines) >= 2:
        answers[lines[0]] = "!error" if lines[1].startswith("error") else lines[1]
with gztext("undname.txt.gz") as f:
    for n in names:
        f.write(f"{n}\t{answers.get(n, '!error')}\n")
with open(os.path.join(here, "synthetic.txt"), "w") as f:
    for n in synthetic:
        f.write(f"{n}\t{answers.get(n, '!error')}\n")

pairs = {}
for pdb, ref in [("windows/mozilla/dump_syms_regtest64.pdb", "mozilla-dump_syms/windows/dump_syms_regtest64.sym"),
                 ("windows/mozilla/basic32-min.pdb", "mozilla-dump_syms/windows/basic32-min.sym")]:
    heads = run("llvm-pdbutil-22", "dump", "-section-headers", os.path.join(corpus, pdb))
    vas = [int(v, 16) for v in re.findall(r"\n\s*([0-9A-F]+) virtual address", heads)]
    pubs = run("llvm-pdbutil-22", "dump", "-publics", os.path.join(corpus, pdb))
    at = {}
    for name, seg, off in re.findall(r"S_PUB32 \[size = \d+\] `([^`]*)`\n\s*flags = [^,]*, addr = (\d+):(\d+)", pubs):
        seg, off = int(seg), int(off)
        if 1 <= seg <= len(vas):
            at.setdefault(vas[seg - 1] + off, []).append(name)
    with open(os.path.join(corpus, ref), errors="replace") as f:
        for line in f:
            if not line.startswith("PUBLIC "):
                continue
            parts = line.rstrip("\n").split(" ", 3)
            if parts[1] == "m":
                parts = line.rstrip("\n").split(" ", 4)[1:]
            addr, name = int(parts[1], 16), parts[3]
            dec = [n for n in at.get(addr, []) if n.startswith("?")]
            if len(dec) == 1 and len(at[addr]) == 1:
                pairs[dec[0]] = name
with gztext("mozilla.txt.gz") as f:
    for n in sorted(pairs):
        f.write(f"{n}\t{pairs[n]}\n")
print(f"{len(names)} names, {sum(1 for n in names if answers.get(n, '!error') != '!error')} demangled by llvm-undname; {len(pairs)} Mozilla pairs")
