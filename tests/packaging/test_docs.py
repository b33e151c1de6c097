"""The man pages, the README and the example configuration say what the
code does.

Each test reads a fact from the code (the configuration key table and
its defaults, the command tables of the socket and of zkelectctl, the
options, the signals the daemon handles, the status keys, the HTTP
routes, the metric families, the hook environment, the socket's error
answers, zkelectctl's exit codes) and compares it with the table or list
of the page that documents it, both ways where a page lists them all, so
that a change to one side alone fails here.  The pages are read from
their roff source: section headings, .TP items and bold words, never
prose.  No ZooKeeper is needed; the two tests that run zkelectctl only
ask for its help.
"""
import re
import shlex

import pytest

from conftest import ROOT, run

SRC = ROOT / "src"
MAN = ROOT / "man"


def read(path):
    return (ROOT / path).read_text()


def c_block(text, start, end="\n};"):
    """The part of text from start to the first end after it."""
    i = text.index(start)
    return text[i:text.index(end, i)]


# Roff, as far as the three pages use it.

FONT_ALTERNATING = {"BR": "BR", "RB": "RB", "BI": "BI", "IB": "IB",
                    "IR": "IR", "RI": "RI"}


def roff_unescape(s):
    s = re.sub(r"\\f(\[[^]]*\]|\(..|.)", "", s)
    for a, b in (("\\-", "-"), ("\\&", ""), ("\\(dq", '"'), ("\\(aq", "'"),
                 ("\\(bu", "*"), ("\\e", "\\"), ("\\ ", " "), ("\\~", " ")):
        s = s.replace(a, b)
    return s


def roff_args(rest):
    try:
        return shlex.split(rest.replace("\\", "\\\\"), posix=True)
    except ValueError:
        return rest.split()


class Item:
    """A .TP item: its tag line and the text up to the next item."""

    def __init__(self, sh, ss, tag):
        self.sh, self.ss, self.tag = sh, ss, tag
        self.lines = []     # plain text
        self.roff = []      # source lines

    @property
    def text(self):
        return " ".join(" ".join(self.lines).split())

    @property
    def bold(self):
        return bold_words(self.roff)


def macro_text(line):
    """The plain text of one source line ("" for a macro without text)."""
    if line.startswith(('.\\"', "'\\\"")):
        return ""
    if not line.startswith("."):
        return roff_unescape(line)
    m = re.match(r"\.(\w+)\s*(.*)", line)
    if m is None:
        return ""
    name, rest = m.group(1), m.group(2)
    if name in ("B", "I", "SM", "SB"):
        return roff_unescape(" ".join(roff_args(rest)))
    if name in FONT_ALTERNATING:
        return roff_unescape("".join(roff_args(rest)))
    return ""


def bold_words(lines):
    """Every bold word of the source lines, unescaped."""
    words = []
    for line in lines:
        m = re.match(r"\.(\w+)\s*(.*)", line)
        if m and m.group(1) in ("B", "SB"):
            words += roff_unescape(" ".join(roff_args(m.group(2)))).split()
        elif m and m.group(1) in ("BR", "BI"):
            words += [roff_unescape(a) for a in roff_args(m.group(2))[0::2]]
        elif m and m.group(1) in ("RB", "IB"):
            words += [roff_unescape(a) for a in roff_args(m.group(2))[1::2]]
        for b in re.findall(r"\\fB(.*?)\\f[RPI]", line):
            words += roff_unescape(b).split()
    return {w.strip(".,;:()=\"") for w in words}


class Page:
    def __init__(self, path):
        self.name = path.name
        self.items = []
        self.sections = {}      # .SH name: source lines
        sh = ss = None
        item = None
        tag_next = False
        for line in path.read_text().splitlines():
            m = re.match(r"\.(SH|SS)\s+(.*)", line)
            if m:
                name = " ".join(roff_args(m.group(2)))
                if m.group(1) == "SH":
                    sh, ss = name, None
                    self.sections[sh] = []
                else:
                    ss = name
                item, tag_next = None, False
                continue
            if sh is not None:
                self.sections[sh].append(line)
            if re.match(r"\.TP\b", line):
                item, tag_next = None, True
                continue
            if re.match(r"\.(PP|P|LP|SH)\b", line):
                item = None
                continue
            if tag_next:
                item = Item(sh, ss, " ".join(macro_text(line).split()))
                self.items.append(item)
                tag_next = False
                continue
            if item is not None:
                item.roff.append(line)
                text = macro_text(line)
                if text:
                    item.lines.append(text)

    def section(self, name):
        assert name in self.sections, f"{self.name}: no section {name}"
        return self.sections[name]

    def section_text(self, name):
        return " ".join(" ".join(macro_text(x) for x in
                                 self.section(name)).split())

    def section_items(self, name):
        items = [i for i in self.items if i.sh == name]
        assert items, f"{self.name}: no items in section {name}"
        return items

    def text(self):
        return " ".join(self.section_text(s) for s in self.sections)


@pytest.fixture(scope="module")
def conf5():
    return Page(MAN / "zkelectd.conf.5")


@pytest.fixture(scope="module")
def ctl1():
    return Page(MAN / "zkelectctl.1")


@pytest.fixture(scope="module")
def d8():
    return Page(MAN / "zkelectd.8")


@pytest.fixture(scope="module")
def readme():
    return read("README.md")


def readme_section(readme, title):
    m = re.search(r"^## " + re.escape(title) + r"\n(.*?)(?=^## )", readme,
                  re.S | re.M)
    assert m, f"README.md: no section {title}"
    return m.group(1)


# The configuration keys.

def c_defines():
    """Numeric #defines of the headers and config_value.c."""
    defs = {}
    for f in list(SRC.glob("*.h")) + [SRC / "config_value.c"]:
        for name, value in re.findall(r"#define\s+(\w+)\s+(-?\d+)\b",
                                      f.read_text()):
            defs[name] = int(value)
    return defs


def c_int(expr, defs):
    expr = expr.strip()
    neg = expr.startswith("-")
    expr = expr.lstrip("-")
    v = defs[expr] if expr in defs else int(expr, 0)
    return -v if neg else v


class Key:
    def __init__(self, kid, section, name, rest):
        self.kid, self.section, self.name = kid, section, name
        self.full = f"{section}.{name}"
        m = re.match(r"(DURATION|COMMAND)\((\w+)", rest)
        if m:
            self.setter = m.group(1).lower()
            self.field = m.group(2)
            self.range = None
        else:
            parts = [p.strip() for p in rest.split(",")]
            self.setter = parts[0]
            self.field = re.match(r"F\((\w+)\)", parts[1]).group(1)
            self.range = (parts[2], parts[3])
        self.duration = self.setter == "duration" or \
            self.field.endswith("_ms")


def code_keys():
    table = c_block(read("src/config_value.c"),
                    "config_value_keys[K_COUNT] = {")
    keys = []
    for entry in re.split(r"\n\t\[", table)[1:]:
        m = re.match(r'(K_\w+)\]\s*=\s*\{\s*"(\w+)",\s*"(\w+)",\s*(.*)\}',
                     " ".join(entry.split()))
        assert m, f"cannot read key table entry {entry!r}"
        keys.append(Key(*m.groups()))
    count = len(re.findall(r"\bK_\w+,",
                           c_block(read("src/config_int.h"),
                                   "enum config_key_id", "K_COUNT")))
    assert len(keys) == count, "key table and enum config_key_id differ"
    return keys


# What a C default means in the words of the pages.
C_SYMBOLS = {
    "LOG_DEBUG": "debug", "LOG_INFO": "info", "LOG_NOTICE": "notice",
    "LOG_WARNING": "warning", "LOG_ERR": "err",
    "CONFIG_MODE_CANDIDATE": "candidate", "CONFIG_MODE_OBSERVER": "observer",
}


def code_defaults(keys):
    """Key name -> (kind, value): what the page must give as default."""
    cfg = read("src/config.c")
    hdr = read("src/config.h")
    load = c_block(cfg, "\nconfig_load_as(", "\n}\n")
    finish = c_block(cfg, "\nconfig_finish(", "\n}\n")
    rundir = re.search(r'#define CONFIG_RUNDIR "([^"]+)"', hdr).group(1)
    assigned = dict(re.findall(r"\n\tnew\.(\w+) = ([^;]+);", load))
    required = set(re.findall(
        r'config_fail\(p, 0, "(\w+\.\w+): required key missing"', finish))
    literal = dict(re.findall(r'cfg->(\w+) = xstrdup\("([^"]*)"\)', finish))
    in_rundir = dict(re.findall(
        r'xasprintf\(&cfg->(\w+), "%s/%s(\.\w+)",\s*CONFIG_RUNDIR', finish))
    derived = dict(re.findall(
        r"cfg->(\w+) = cfg->\w+ / (\d+);", finish))
    sentinel = dict(re.findall(r"(\w+);\s*/\* -1: (\w+)", hdr))
    out = {}
    for k in keys:
        f = k.field
        if k.full in required:
            out[k.full] = ("required", None)
        elif f in assigned:
            v = assigned[f].strip()
            if k.duration and v == "-1":
                assert f in sentinel, f"config.h: what -1 means for {f}"
                out[k.full] = ("word", sentinel[f])
            elif k.duration:
                out[k.full] = ("duration", int(v, 0))
            elif k.setter == "config_value_bool":
                out[k.full] = ("word", {"1": "yes", "0": "no"}[v])
            elif re.fullmatch(r"-?\d+", v):
                out[k.full] = ("word", v)
            else:
                assert v in C_SYMBOLS, \
                    f"{k.full}: default {v}: add its word to C_SYMBOLS"
                out[k.full] = ("word", C_SYMBOLS[v])
        elif f in literal:
            out[k.full] = ("empty", None) if literal[f] == "" else \
                ("word", literal[f])
        elif f in in_rundir:
            out[k.full] = ("word", f"{rundir}/service{in_rundir[f]}")
        elif f == "id" and "gethostname" in finish:
            out[k.full] = ("phrase", "host name")
        elif f in derived:
            words = {"2": "half", "3": "third", "4": "quarter"}
            out[k.full] = ("phrase", words[derived[f]])
        else:
            out[k.full] = ("none", None)
    return out


def duration_ms(s):
    m = re.fullmatch(r"(\d+)(ms|s|m)?", s)
    if m is None:
        return None
    return int(m.group(1)) * {None: 1, "ms": 1, "s": 1000,
                              "m": 60000}[m.group(2)]


def conf5_keys(conf5):
    """section.key -> Item of zkelectd.conf(5)'s KEYS."""
    out = {}
    for item in conf5.section_items("KEYS"):
        section = item.ss.strip("[]")
        for name in item.tag.split(" / "):
            out[f"{section}.{name}"] = item
    return out


def doc_default(item):
    m = re.search(r"(?:^|\.\s|,\s)[Dd]efault(?::\s*|\s+)(.+?)\.(?:\s|$)",
                  item.text)
    return m.group(1) if m else None


def test_every_key_the_parser_accepts_is_in_the_page_and_back(conf5):
    code = {k.full for k in code_keys()}
    doc = set(conf5_keys(conf5))
    assert (sorted(code - doc), sorted(doc - code)) == ([], [])


def test_every_default_is_the_code_s(conf5):
    items = conf5_keys(conf5)
    wrong = []
    for key, (kind, value) in code_defaults(code_keys()).items():
        item = items[key]
        said = doc_default(item)
        if kind == "required":
            ok = said is None and "Required." in item.text
        elif said is None:
            ok = False
        else:
            first = said.split()[0].strip(",;()")
            if kind == "duration":
                ok = duration_ms(first) == value
            elif kind == "word":
                ok = first == value
            elif kind in ("none", "empty"):
                ok = first == kind
            else:
                ok = value in said
        if not ok:
            wrong.append(f"{key}: code {kind} {value!r}, page {said!r}")
    assert wrong == []


def test_durations_and_ranges_are_the_code_s(conf5):
    items = conf5_keys(conf5)
    defs = c_defines()
    wrong = []
    for k in code_keys():
        item = items[k.full]
        words = {w.strip(".,;:()") for w in item.text.split()}
        if k.duration != ("duration" in words):
            wrong.append(f"{k.full}: duration in code {k.duration}, "
                         "not so in the page")
        if k.setter == "config_value_number":
            lo, hi = (c_int(x, defs) for x in k.range)
            if f"{lo} to {hi}" not in item.text:
                wrong.append(f"{k.full}: range {lo} to {hi} not in page")
    assert wrong == []


def test_a_duration_s_own_limit_is_in_the_page(conf5):
    """The page gives the general cap of durations once; a key whose
    duration has a lower one says so in its own item."""
    items = conf5_keys(conf5)
    defs = c_defines()
    wrong = []
    for k in code_keys():
        if not k.duration or k.range is None or \
                k.range[1] == "CONFIG_DURATION_MAX":
            continue
        hi = c_int(k.range[1], defs)
        said = {duration_ms(w.strip(".,;:()"))
                for w in items[k.full].text.split()}
        if hi not in said:
            wrong.append(f"{k.full}: at most {hi}ms, not in the page")
    assert wrong == []


def test_the_example_config_shows_every_key_with_its_default():
    seen = {}
    section = None
    for line in read("conf/zkelectd.conf.example").splitlines():
        m = re.fullmatch(r"\[(\w+)\]", line)
        if m:
            section = m.group(1)
            continue
        m = re.fullmatch(r"#?(\w+) = (.*)", line)
        if m and section:
            seen[f"{section}.{m.group(1)}"] = m.group(2)
    keys = code_keys()
    wrong = [k.full for k in keys if k.full not in seen]
    for key, (kind, value) in code_defaults(keys).items():
        if key not in seen:
            continue
        if kind == "duration" and duration_ms(seen[key]) != value:
            wrong.append(f"{key} = {seen[key]}, default {value}ms")
        elif kind == "word" and not value.startswith("/run/") and \
                seen[key] != value:
            wrong.append(f"{key} = {seen[key]}, default {value}")
    assert wrong == []


# zkelectd's command line and signals.

def c_longopts(path):
    text = read(path)
    block = c_block(text, "struct option longopts[] = {", "};")
    pairs = set(re.findall(r'\{ "([\w-]+)", \w+, NULL, \'(\w)\' \}', block))
    short = re.search(r'getopt_long\(argc, argv, "\+?([^"]+)"', text).group(1)
    return {(s, l) for l, s in pairs}, set(short.replace(":", ""))


def doc_options(page):
    pairs, shorts = set(), set()
    for item in page.section_items("OPTIONS"):
        m = re.match(r"-(\w)(?:, --([\w-]+))?", item.tag)
        assert m, f"{page.name}: option tag {item.tag!r}"
        shorts.add(m.group(1))
        if m.group(2):
            pairs.add((m.group(1), m.group(2)))
    return pairs, shorts


def test_zkelectd_options_are_the_page_s(d8):
    assert doc_options(d8) == c_longopts("src/zkelectd.c")


def test_zkelectctl_options_are_the_page_s(ctl1):
    assert doc_options(ctl1) == c_longopts("src/zkelectctl.c")


def code_signals():
    text = read("src/zkelectd.c")
    handled = set(re.findall(r"SIG[A-Z0-9]+",
                             c_block(text, "static const int sigs[", ";")))
    ignored = set(re.findall(r"signal\((SIG\w+), SIG_IGN\)", text))
    # SIGCHLD only reaps the hooks: nothing a user sends.
    return (handled | ignored) - {"SIGCHLD"}


def test_every_signal_the_daemon_handles_is_in_the_page_and_back(d8):
    doc = set()
    for item in d8.section_items("SIGNALS"):
        doc |= set(item.tag.split(", "))
    assert doc == code_signals()


# zkelectctl and the socket.

def ctl_commands():
    block = c_block(read("src/zkelectctl.c"),
                    "struct zkelectctl_cmd zkelectctl_cmds[] = {")
    return {name: (kind, args) for name, kind, args in re.findall(
        r'\{\s*"([a-z-]+)",\s*KIND_(\w+),\s*"([^"]*)"', block)}


def socket_commands():
    text = c_block(read("src/command.c"), "\ncommand_handle(", "\n}\n")
    return set(re.findall(r'strn?cmp\(line, "([a-z ]+)"', text))


def test_zkelectctl_commands_are_the_page_s_and_back(ctl1):
    cmds = ctl_commands()
    doc = {}
    for item in ctl1.section_items("COMMANDS"):
        doc[item.tag.split()[0]] = item.tag.lower()
    assert sorted(doc) == sorted(cmds)
    for name, (kind, args) in cmds.items():
        for word in args.lower().replace("[", " ").replace("]", " ").split():
            assert word in doc[name].replace("[", " ").replace(
                "]", " ").split(), (name, word)


def test_zkelectctl_help_lists_every_command_and_option(bindir, ctl1):
    r = run([str(bindir / "zkelectctl"), "--help"])
    assert r.returncode == 0
    listed = re.findall(r"^  ([a-z-]+)", r.stdout.split("Options:")[0],
                        re.M)
    assert sorted(listed) == sorted(ctl_commands())
    opts = set(re.findall(r"^  -(\w), --([\w-]+)", r.stdout, re.M))
    assert opts == doc_options(ctl1)[0]


def test_every_socket_command_is_one_of_zkelectctl_s_and_documented(
        ctl1, d8):
    cmds = ctl_commands()
    sock = socket_commands()
    client_side = {n for n, (k, _) in cmds.items()
                   if k in ("IS_LEADER", "WAIT")}
    sent = set()
    for name, (kind, _) in cmds.items():
        if name in client_side:
            continue
        sent.add(name)
        if kind == "JSON":
            sent.add(f"{name} json")
    assert sorted(sock) == sorted(sent)
    text = ctl1.text() + " " + d8.text()
    for c in sock:
        assert c in text, f"socket command {c!r} in no page"


def code_errors():
    errs = set()
    for f in SRC.glob("*.[ch]"):
        text = f.read_text()
        errs |= set(re.findall(r'"error ([a-z-]+)', text))
        errs |= set(re.findall(r'el_switch_clear\(el, "([a-z-]+)"\)', text))
    errs |= set(re.findall(r'"([a-z-]+)"\);',
                           c_block(read("src/switchover.c"),
                                   "error %s", "\n}\n")))
    return errs


def test_every_error_answer_is_in_the_page_and_back(ctl1):
    code = code_errors()
    source = [x for s in ctl1.sections.values() for x in s]
    page = " ".join(source)
    said = bold_words(source)
    documented = {w.removeprefix("error ") for w in said}
    missing = sorted(e for e in code if e not in documented and
                     f"error {e}" not in roff_unescape(page))
    assert missing == []
    named = set(re.findall(r'"error ([a-z-]+)"', roff_unescape(page)))
    assert named
    assert sorted(named - code) == []


def code_roles():
    text = c_block(read("src/election_event.c"), "\nelection_role_name(",
                   "\n}\n")
    return set(re.findall(r'return "(\w+)";', text))


def test_roles_are_the_same_everywhere(ctl1, d8):
    roles = code_roles()
    ctl = set(re.findall(r'"(\w+)"', c_block(
        read("src/zkelectctl.c"), "zkelectctl_roles[] = {", "};")))
    assert ctl == roles
    role_item = [i for i in ctl1.section_items("COMMANDS")
                 if i.tag == "role"][0]
    assert roles <= role_item.bold
    assert roles <= bold_words(d8.section("ROLES"))


def exit_codes():
    return {int(n): name for name, n in re.findall(
        r"EXIT_(\w+) = (\d+)", read("src/ctlclient.h"))}


def test_zkelectctl_exit_codes_are_the_page_s_readme_s_and_help_s(
        ctl1, readme, bindir):
    codes = exit_codes()
    doc = {int(i.tag) for i in ctl1.section_items("EXIT STATUS")}
    assert doc == set(codes)
    r = run([str(bindir / "zkelectctl"), "--help"])
    helped = re.search(r"Exit codes: (.*?)\.\n", r.stdout, re.S).group(1)
    m = re.search(r"`zkelectctl` exits (.*?)\. ", readme, re.S)
    assert m, "README.md: no sentence on zkelectctl's exit codes"
    for text in (helped, m.group(1)):
        said = dict((int(n), w) for n, w in
                    re.findall(r"(?:^|,\s)(\d) (.*?)(?=,\s\d |$)",
                               " ".join(text.split())))
        assert set(said) == set(codes), text
        for n, name in codes.items():
            word = name.split("_")[-1].lower()
            assert word in said[n].lower(), (n, name, said[n])


# The status file.

def status_keys():
    text = read("src/status.c")
    shell = re.findall(r'status_shell\(&b, "(\w+)"', text)
    json = re.findall(r'status_json_(?:str|num)\(&b, "(\w+)"', text)
    json = list(dict.fromkeys(json))
    assert shell == json, "the status lines and status json differ"
    return shell


def test_every_status_key_is_in_both_pages(ctl1, d8):
    keys = set(status_keys())
    sect = bold_words(d8.section("STATUS FILE"))
    status_item = [i for i in ctl1.section_items("COMMANDS")
                   if i.tag.startswith("status")][0]
    assert (sorted(keys - sect), sorted(keys - status_item.bold)) == \
        ([], [])
    # A name with an underscore the pages give as a key is one.
    for words in (sect, status_item.bold):
        said = {w for w in words if re.fullmatch(r"[a-z]+(_[a-z]+)+", w)}
        assert sorted(said - keys) == []


# HTTP, metrics, hooks.

def http_paths():
    return set(re.findall(r'\{ "(/\w*)", http_\w+,', read("src/http.c")))


def test_http_paths_are_the_page_s_and_the_readme_s(d8, readme):
    paths = http_paths()
    doc = {i.tag for i in d8.section_items("HTTP")}
    table = set(re.findall(r"^\| `(/\w*)` \|",
                           readme_section(readme, "Load balancers and "
                                          "Prometheus over HTTP"), re.M))
    assert (doc, table) == (paths, paths)


def metric_families():
    text = read("src/metrics.c")
    fams = set(re.findall(r'metrics_(?:family|single)\(&?b, "(\w+)"', text))
    return {f"zkelectd_{f}" for f in fams}


def test_every_metric_family_is_in_the_page_and_back(d8, ctl1, readme):
    fams = metric_families()
    doc = {w for w in bold_words(d8.section("METRICS"))
           if w.startswith("zkelectd_")}
    assert (sorted(fams - doc), sorted(doc - fams)) == ([], [])
    mentioned = set(re.findall(r"\bzkelectd_[a-z_]*[a-z]",
                               readme + ctl1.text() + d8.text()))
    suffixed = {f + s for f in fams for s in ("_bucket", "_sum", "_count")}
    assert sorted(mentioned - fams - suffixed) == []


def test_every_metric_label_and_op_is_in_the_pages(d8, ctl1):
    text = read("src/metrics.c")
    labels = set(re.findall(r'metrics_one\(b?&?b, "\w+", "(\w+)"', text))
    labels |= set(re.findall(r',(\w+)=\\"', text)) - {"le"}
    assert labels >= {"hook", "op", "version"}
    assert sorted(labels - bold_words(d8.section("METRICS"))) == []
    ops = set(re.findall(r'"(\w+)"', c_block(
        read("src/election_event.c"), "\nelection_op_name(", "\n}\n")))
    ops.add(re.search(r'k == EL_OP_NONE \? "(\w+)"', text).group(1))
    # the reads of the queue made outside the core, counted by metrics.c
    ops |= set(re.findall(r'"zookeeper_requests_total", "op", "(\w+)"', text))
    metrics_item = [i for i in ctl1.section_items("COMMANDS")
                    if i.tag == "metrics"][0]
    said = {w for w in metrics_item.bold if re.fullmatch(r"[a-z_]+", w) and
            not w.startswith("zkelectd_")} - {"service", "id", "op"}
    assert said and sorted(said - ops) == []


def hook_env():
    env = set()
    for f in ("slot_hook.c", "notify_hook.c", "run_hook.c", "crashed.c"):
        env |= set(re.findall(r'"(ZKELECT_[A-Z_]+)"',
                              (SRC / f).read_text()))
    return env


def test_every_hook_variable_is_in_the_page_and_readme(d8, readme):
    env = hook_env()
    hooks = bold_words(d8.section("HOOKS"))
    section = readme_section(readme, "Hooks")
    assert (sorted(env - hooks),
            sorted(v for v in env if v not in section)) == ([], [])
    said = set(re.findall(r"\bZKELECT_[A-Z_]*[A-Z]",
                          d8.text() + readme))
    assert sorted(said - env) == []


def test_hook_events_are_the_page_s(d8):
    text = c_block(read("src/hook.c"), "\nhook_kind_name(", "\n}\n")
    kinds = set(re.findall(r'case HOOK_\w+:\s*return "(\w+)";', text))
    m = re.search(r"ZKELECT_EVENT \(([^)]*)\)", d8.section_text("HOOKS"))
    assert m, "zkelectd(8) HOOKS: no list of ZKELECT_EVENT values"
    assert set(m.group(1).replace(",", " ").split()) == kinds


def test_readme_commands_are_zkelectctl_s(readme):
    said = re.findall(r"^zkelectctl -n \w+ ([a-z-]+)(?: \| ([a-z-]+))?",
                      readme_section(readme, "Ask who leads"), re.M)
    cmds = ctl_commands()
    names = {w for pair in said for w in pair if w}
    assert names and sorted(names - set(cmds)) == []


def page_reasons(d8):
    """The ZKELECT_REASON words zkelectd(8)'s HOOKS lists."""
    lines = d8.section("HOOKS")
    start = next(i for i, x in enumerate(lines) if x.startswith("Reasons are"))
    end = next(i for i in range(start, len(lines))
               if re.match(r"\.PP\b", lines[i]))
    return {w for w in bold_words(lines[start:end])
            if re.fullmatch(r"[a-z]+(-[a-z]+)*", w)}


def test_hook_reasons_are_the_same_in_the_page_and_readme(d8, readme):
    said = page_reasons(d8)
    m = re.search(r"`ZKELECT_REASON` is one of(.*?)\n\n",
                  readme_section(readme, "Hooks"), re.S)
    assert m, "README.md: no list of ZKELECT_REASON values"
    words = {w for q in re.findall(r"`([^`]*)`", m.group(1))
             for w in q.split() if re.fullmatch(r"[a-z]+(-[a-z]+)*", w)}
    assert (sorted(said - words), sorted(words - said)) == ([], [])
    literals = set()
    for f in SRC.glob("*.c"):
        literals |= set(re.findall(r'"([a-z-]+)"', f.read_text()))
    assert sorted(said - literals) == []


def reload_refused():
    """The keys a reload keeps: config_fixed.c's table, which daemon_reload()
    walks, and any other key it warns about by name."""
    table = c_block(read("src/config_fixed.c"), "config_fixed_keys[FIXED_N]",
                    "\n};\n")
    keep = set(re.findall(r'\] = "(\w+\.\w+)"', table))
    assert keep, "config_fixed.c's table of kept keys not found"
    text = c_block(read("src/zkelectd.c"), "\ndaemon_reload(", "\n}\n")
    assert "config_keep_fixed(" in text
    warned = set(re.findall(r'"reload: (\w+\.\w+) cannot change', text))
    return keep | warned


def test_keys_a_reload_refuses_are_the_page_s(conf5):
    refused = reload_refused()
    sentences = re.split(r"\.\s+", conf5.section_text("RELOADING"))
    said = set()
    for s in sentences:
        if "refused with a warning" in s:
            said |= set(re.findall(r"\b([a-z]+\.[a-z_]+)\b", s))
    assert (sorted(refused - said), sorted(said - refused)) == ([], [])


def test_reloading_says_what_becomes_of_every_key(conf5):
    """RELOADING names each key, or the section it belongs to, so that no
    key's fate on SIGHUP is left unsaid."""
    text = conf5.section_text("RELOADING")
    sections = set(re.findall(r"\[(\w+)\] section", text))
    unsaid = [k.full for k in code_keys()
              if k.section not in sections and
              not re.search(rf"\b{re.escape(k.full)}\b", text)]
    assert unsaid == []


def error_form(s):
    """A message with its variable parts as %, and section.key as %.%."""
    s = re.sub(r"%[-.*\d]*(?:ll|l|z)?[sdu]", "%", s)
    s = re.sub(r"\b[a-z_]+\.[a-z_]+\b", "%.%", s)
    return re.sub(r"\b\d+\b", "%", s)


def code_config_error_forms():
    text = read("src/config.c")
    forms = set()
    for m in re.finditer(r"\bconfig_fail\(&?p, ([^,]+),", text):
        lit = re.match(r'\s*((?:"(?:[^"\\]|\\.)*"\s*)+)', text[m.end():])
        if lit is None:
            continue
        fmt = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', lit.group(1)))
        where = m.group(1).strip()
        prefix = {"0": "%: ", "-1": ""}.get(where, "%:%: ")
        forms.add(error_form(prefix + fmt))
    assert len(forms) > 5, "cannot read config.c's error messages"
    return forms


def page_config_error_forms(conf5):
    lines = conf5.section("ERRORS")
    block = lines[lines.index(".nf") + 1:lines.index(".fi")]
    forms = set()
    for line in block:
        m = re.match(r"\.(IB|BI)\s+(.*)", line)
        assert m, f"zkelectd.conf(5) ERRORS: {line!r}"
        args = [roff_unescape(a) for a in roff_args(m.group(2))]
        italic = 0 if m.group(1) == "IB" else 1
        forms.add(error_form("".join(
            "%" if i % 2 == italic else a for i, a in enumerate(args))))
    return forms


def test_every_form_of_config_error_is_in_the_page(conf5):
    page = page_config_error_forms(conf5)
    generic = {f[:-1] for f in page if f.endswith(": %")}
    missing = sorted(f for f in code_config_error_forms()
                     if f not in page and
                     not any(f.startswith(g) for g in generic))
    assert missing == []


def test_history_reasons_of_the_daemon_are_in_the_page(d8):
    text = c_block(read("src/history.c"), "\nhistory_reason(", "\n}\n")
    reasons = set(re.findall(r'"([a-z-]+)"', text))
    assert len(reasons) > 5, "cannot read history.c's reasons"
    assert sorted(reasons - bold_words(d8.section("HISTORY"))) == []
