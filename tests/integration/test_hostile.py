"""Hostile input from ZooKeeper: what peers wrote is untrusted and shown
under one rule (control bytes and invalid UTF-8 replaced) by every output."""
import json
import re
import socket
import subprocess

from zkharness import parse_kv, wait_for

BAD = re.compile(r"[\x00-\x1f\x7f-\x9f]")

HOSTILE_ID = b"ev\til\x1b[31m\r\x07\xff\xfe\xc3\xa9"
HOSTILE_DATA = b"d\tata\x1b]0;pwned\x07 \xc3\x28 \xe2\x82\xac"


def plant_hostile_leader(kz, path):
    """A kazoo session that heads the queue and acknowledges itself leader
    with hostile id and data, as a buggy or malicious peer could."""
    kz.ensure_path(f"{path}/candidates")
    sid = kz.client_id[0]
    me = kz.create(f"{path}/candidates/candidate-{sid:016x}_",
                   b"id=" + HOSTILE_ID + b"\ndata=" + HOSTILE_DATA + b"\n",
                   ephemeral=True, sequence=True)
    _, st = kz.get(me)
    kz.create(f"{path}/leader", b"id=" + HOSTILE_ID + b"\ndata=" +
              HOSTILE_DATA + b"\nepoch=" + str(st.czxid).encode() + b"\n",
              ephemeral=True)
    return st.czxid


def ask(d, cmd, timeout=5.0):
    """The raw answer: bytes, so that invalid UTF-8 would show."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(str(d.socket))
        s.sendall(cmd.encode() + b"\n")
        chunks = []
        while (b := s.recv(65536)):
            chunks.append(b)
    return b"".join(chunks)


def clean_text(raw, seps="\n"):
    """raw decodes as UTF-8 (strictly) and has no control character but
    the separators."""
    text = raw.decode("utf-8")
    for c in seps:
        text = text.replace(c, "")
    assert not BAD.search(text), raw
    return raw.decode("utf-8")


def test_peer_data_is_cleaned_in_every_output(election, kz):
    epoch = plant_hostile_leader(kz, election.path)
    d = election.daemon("node1", data="10.0.0.1:5432")
    d.wait_role("follower")
    want_id = "ev?il?[31m????\u00e9"
    want_data = "d?ata?]0;pwned? ?( \u20ac"
    wait_for(lambda: d.leader().get("id") == want_id, 10,
             "node1 to report the planted leader, cleaned")

    assert parse_kv(clean_text(ask(d, "leader"))) == {
        "id": want_id, "data": want_data, "epoch": str(epoch)}

    # members: three tab-separated fields on every line.
    lines = clean_text(ask(d, "members"), "\n\t").splitlines()
    assert [line.split("\t")[1:] for line in lines] == [
        [want_id, want_data], ["node1", "10.0.0.1:5432"]], lines

    # status and status json.
    st = parse_kv(clean_text(ask(d, "status")))
    assert st["leader"] == want_id and st["leader_data"] == want_data, st
    st = json.loads(clean_text(ask(d, "status json")))
    assert st["leader"] == want_id and st["leader_data"] == want_data, st

    # The status file: sourceable lines, nothing a terminal would obey.
    body = clean_text(d.status_file.read_bytes())
    assert all(re.match(r"^[a-z_]+=", line) for line in body.splitlines())
    out = subprocess.run(["sh", "-c", f". {d.status_file}; printf %s "
                          "\"$leader\""], capture_output=True, check=True)
    assert out.stdout.decode() == want_id

    # The first watch line.
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(5)
        s.connect(str(d.socket))
        s.sendall(b"watch\n")
        line = s.recv(4096)
    assert clean_text(line).startswith(f"role=follower leader={want_id} ")
    assert d.role() == "follower"
