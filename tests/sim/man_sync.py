#!/usr/bin/env python3
"""man_sync: the man pages against the programs and the policy parser.

    man_sync.py ROOT

ROOT is the source tree, with build/ built.  Checks, each failure one line
on stdout (exit 1 if any):
  - every option of `ibsmd --help`, `ibsmctl --help`, `ibsm-listen --help`
    is in its page's SYNOPSIS (the long form, or the short letter);
  - every ibsmctl command of its --help has an `.It Cm` entry in ibsmctl.8;
  - every page of man/ has an EXAMPLES section;
  - every key of the policy parser's tables (sm/model/config.c) has an
    `.It Ic KEY Pq TYPE; DEFAULT` entry in ibsmd.yaml.5 (keys refused as
    not implemented yet: an entry, no default needed).
"""

import glob
import os
import re
import subprocess
import sys


def section(text, name):
    m = re.search(r"^\.Sh %s\n(.*?)(?=^\.Sh |\Z)" % re.escape(name), text, re.M | re.S)
    return m.group(1) if m else None


def help_options(prog):
    """-> (the --help text, [(short letter or None, long name)]): the options
    defined at the start of a line ("  -c, --config FILE"), or, for a usage
    line in brackets, every "--name" before a "commands:" list."""
    out = subprocess.run([prog, "--help"], capture_output=True, text=True).stdout
    head = out.split("commands:", 1)[0]
    opts = re.findall(r"^\s+(?:-(\w), )?--([a-z][a-z-]*)", head, re.M)
    if not opts:
        opts = [(None, o) for o in re.findall(r"--([a-z][a-z-]*)", head)]
        opts += [(s, None) for s in re.findall(r"\[-(\w)[\] ]", head)]
    return out, [(s or None, o) for s, o in opts]


def check_synopsis(page, prog, errs):
    text = open(page).read()
    syn = section(text, "SYNOPSIS") or ""
    shorts = set("".join(re.findall(r"(?:\bFl|\|) ([A-Za-z]+)\b", syn)))
    longs = set(re.findall(r"\bFl -([a-z][a-z-]*)", syn))
    out, opts = help_options(prog)
    if not opts:
        errs.append("%s --help: no options found" % prog)
    for short, long_ in opts:
        if (long_ and long_ in longs) or (short and short in shorts):
            continue
        errs.append("%s: %s not in SYNOPSIS" % (os.path.basename(page),
                                                 "--" + long_ if long_ else "-" + short))
    return out


def config_keys(src):
    tables = dict(re.findall(r"static const struct key (\w+)\[\] = \{(.*?)\n\};", src, re.S))

    # MACRO("name", args...) or TMACRO(struct, "name", ...) or { .name = "name" }
    def walk(table, prefix):
        for m in re.finditer(r'(\w+)\(\s*(?:\w+\s*,\s*)?"([a-z_0-9]+)"([^)]*)|\{ \.name = "([a-z_]+)"',
                             tables[table]):
            macro, name, rest, plain = m.groups()
            args = [a.strip() for a in (rest or "").split(",")][1:]
            if plain:
                yield prefix + plain, "KEY"
            elif macro in ("MAP", "MAP_CHECKED"):
                yield from walk(args[0], prefix + name + ".")
            elif macro == "SEQ":	# its items' keys: NAME[].KEY
                yield prefix + name, macro
                yield from walk(args[2], prefix + name + "[].")
            else:
                yield prefix + name, macro
    return list(walk("top_keys", ""))


def main(root):
    errs = []
    man = os.path.join(root, "man")
    build = os.path.join(root, "build")
    check_synopsis(os.path.join(man, "ibsmd.8"), os.path.join(build, "ibsmd"), errs)
    check_synopsis(os.path.join(man, "ibsm-listen.8"), os.path.join(build, "ibsm-listen"), errs)
    ctl_help = check_synopsis(os.path.join(man, "ibsmctl.8"), os.path.join(build, "ibsmctl"), errs)
    ctl_page = open(os.path.join(man, "ibsmctl.8")).read()
    cmds = re.findall(r"^  ([a-z]+(?: [a-z]+)?)[ ,]", ctl_help.split("commands:", 1)[-1], re.M)
    if "until implemented:" in ctl_help:    # a list of commands still refused
        cmds += re.findall(r"(?<=, )([a-z]+)", ctl_help.split("until implemented:", 1)[1])
    for c in cmds:
        if not re.search(r"^\.It Cm %s\b" % re.escape(c), ctl_page, re.M):
            errs.append("ibsmctl.8: command '%s' has no .It Cm entry" % c)
    for page in sorted(glob.glob(os.path.join(man, "*.[1-9]"))):
        if section(open(page).read(), "EXAMPLES") is None:
            errs.append("%s: no EXAMPLES section" % os.path.basename(page))
    yaml5 = open(os.path.join(man, "ibsmd.yaml.5")).read()
    keys = config_keys(open(os.path.join(root, "sm", "model", "config.c")).read())
    if len(keys) < 10:
        errs.append("sm/model/config.c: only %d keys found: the table format changed?" % len(keys))
    for key, kind in keys:
        m = re.search(r"^\.It Ic %s Pq (.*)$" % re.escape(key), yaml5, re.M)
        if not m:
            errs.append("ibsmd.yaml.5: key %s has no '.It Ic %s Pq TYPE; DEFAULT' entry" % (key, key))
        elif not kind.startswith("TODO") and ";" not in m.group(1):
            errs.append("ibsmd.yaml.5: key %s: no default ('Pq TYPE; DEFAULT')" % key)
    for e in errs:
        print(e)
    print("man_sync: %d keys, %d ibsmctl commands, %d problems" % (len(keys), len(cmds), len(errs)),
          file=sys.stderr)
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
