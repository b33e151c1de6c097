/*
 * config_load() against a table of files: each case is written to a
 * temporary file, loaded with its overrides, and either checked field by
 * field or expected to fail with a given message.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"

/* Lines 1-4 of most cases; their own lines start at 5. */
#define BASE	"[zookeeper]\nhosts = zk1:2181\n[election]\nservice = pg\n"

#define X8	"xxxxxxxx"
#define X64	X8 X8 X8 X8 X8 X8 X8 X8
#define X192	X64 X64 X64
#define X128	X64 X64

struct config_case {
	const char	*name;
	const char	*file;		/* NULL: no such file */
	const char	*overrides[4];	/* up to the first NULL */
	/*
	 * NULL when the load must succeed.  Otherwise the error must contain
	 * this text or, when it starts with '@', start with it, '@' standing
	 * for the file's path (nothing for an -o error).
	 */
	const char	*error;
	void		(*check)(const struct config *);
};

static void
check_overrides(const struct config *c)
{
	assert_string_equal(c->hosts, "a:1,b:2");
	assert_int_equal(c->mode, CONFIG_MODE_OBSERVER);
	assert_string_equal(c->service, "other");
	assert_string_equal(c->socket_path, "/run/zkelectd/other.sock");
	assert_string_equal(c->status_file, "/run/zkelectd/other.status");
	assert_string_equal(c->hook_promote, "echo a; echo b");
}

static void
check_comments(const struct config *c)
{
	assert_string_equal(c->hook_promote, "/usr/bin/promote");
	assert_string_equal(c->hook_demote, "/usr/bin/demote;still-here");
	assert_string_equal(c->data, "10.0.0.5:5432");
}

static void
check_values(const struct config *c)
{
	char *path;

	path = config_election_path(c);
	assert_string_equal(path, "/a/b-c/pg");
	free(path);
	assert_int_equal(c->session_timeout_ms, 20000);
	assert_int_equal(c->demote_timeout_ms, 6000);
	assert_int_equal(c->hook_timeout_ms, 90000);
	assert_int_equal(c->check_interval_ms, 250);
	assert_int_equal(c->disconnect_grace_ms, 1500);
	assert_int_equal(c->retry_backoff_ms, 0);
	assert_int_equal(c->check_fall, 1000);
	assert_int_equal(c->check_rise, 1);
	assert_int_equal(c->demote_on_start, 0);
	assert_string_equal(c->root, "/a/b-c");
	assert_string_equal(c->auth, "user:pa:ss");
	assert_string_equal(c->id, "node-1");
	assert_string_equal(c->socket_path, "/tmp/s.sock");
	assert_int_equal(c->socket_mode, 0600);
	assert_string_equal(c->socket_group, "zkelect");
	assert_string_equal(c->status_file, "/var/lib/x/status");
	assert_int_equal(c->log_level, LOG_DEBUG);
	assert_int_equal(c->max_clients, 65536);
}

static void
check_demote_default(const struct config *c)
{
	assert_int_equal(c->session_timeout_ms, 6000);
	assert_int_equal(c->demote_timeout_ms, 1500);
}

static void
check_demote_edge(const struct config *c)
{
	assert_int_equal(c->demote_timeout_ms, 3333);
}

static void
check_candidate(const struct config *c)
{
	assert_int_equal(c->mode, CONFIG_MODE_CANDIDATE);
}

static void
check_bool_on(const struct config *c)
{
	assert_int_equal(c->demote_on_start, 1);
}

static void
check_bool_off(const struct config *c)
{
	assert_int_equal(c->demote_on_start, 0);
}

static void
check_mode_660(const struct config *c)
{
	assert_int_equal(c->socket_mode, 0660);
	assert_int_equal(c->log_level, LOG_ERR);
}

static void
check_empty_hooks(const struct config *c)
{
	assert_null(c->hook_promote);
	assert_null(c->hook_check);
	assert_null(c->hook_notify);
	assert_null(c->auth);
	assert_null(c->socket_group);
}

static void
check_notify(const struct config *c)
{
	assert_string_equal(c->hook_notify, "/usr/bin/repoint \"$ZKELECT_LEADER\"");
	assert_null(c->hook_promote);
}

static void
check_root_slash(const struct config *c)
{
	char *path;

	assert_string_equal(c->root, "/");
	path = config_election_path(c);
	assert_string_equal(path, "/pg");
	free(path);
}

static void
check_long_line(const struct config *c)
{
	assert_int_equal(strlen(c->data), 192);
}

static void
check_indented(const struct config *c)
{
	assert_string_equal(c->hook_promote, "p");
	assert_int_equal(c->hook_timeout_ms, 5000);
}

static void
check_ipv6(const struct config *c)
{
	assert_string_equal(c->hosts, "::1:2181,zk-2.example.com:2182");
}

static void
check_listen(const struct config *c)
{
	assert_int_equal(c->nhttp_listen, 3);
	assert_string_equal(c->http_listen[0].host, "127.0.0.1");
	assert_int_equal(c->http_listen[0].port, 8008);
	assert_string_equal(c->http_listen[0].name, "127.0.0.1:8008");
	assert_string_equal(c->http_listen[1].host, "::1");
	assert_string_equal(c->http_listen[1].name, "[::1]:8008");
	assert_string_equal(c->http_listen[2].host, "0.0.0.0");
	assert_int_equal(c->http_listen[2].port, 9);
}

static void
check_listen_override(const struct config *c)
{
	assert_int_equal(c->nhttp_listen, 2);
	assert_string_equal(c->http_listen[0].name, "10.1.2.3:80");
	assert_string_equal(c->http_listen[1].name, "[::]:81");
}

static void
check_listen_none(const struct config *c)
{
	assert_int_equal(c->nhttp_listen, 0);
	assert_null(c->http_listen);
}

static void
check_colon(const struct config *c)
{
	assert_string_equal(c->hook_promote, "/bin/true --a=b");
	assert_string_equal(c->id, "a:b");
	assert_string_equal(c->data, "10.0.0.5:5432");
}

static void
check_preempt_day(const struct config *c)
{
	assert_int_equal(c->preempt_delay_ms, 86400000);
}

static const struct config_case config_cases[] = {
	/* Valid files. */
	{ "minimal", BASE, { NULL }, NULL, NULL },
	{ "every key", "[zookeeper]\n"
	    "hosts = zk1:2181\n"
	    "session_timeout = 20s\n"
	    "root = /a/b-c\n"
	    "auth = digest:user:pa:ss\n"
	    "[election]\n"
	    "service = pg\n"
	    "id = node-1\n"
	    "data =\n"
	    "mode = candidate\n"
	    "disconnect_grace = 1500\n"
	    "[hooks]\n"
	    "timeout = 1m30s\n", { NULL },
	    ":13: hooks.timeout: not a duration", NULL },
	{ "every key, valid", "[zookeeper]\n"
	    "hosts = zk1:2181\n"
	    "session_timeout = 20s\n"
	    "root = /a/b-c\n"
	    "auth = digest:user:pa:ss\n"
	    "[election]\n"
	    "service = pg\n"
	    "id = node-1\n"
	    "disconnect_grace = 1500\n"
	    "[hooks]\n"
	    "timeout = 90s\n"
	    "demote_timeout = 6s\n"
	    "check_interval = 250ms\n"
	    "check_fall = 1000\n"
	    "check_rise = 1\n"
	    "retry_backoff = 0\n"
	    "demote_on_start = no\n"
	    "[control]\n"
	    "socket = /tmp/s.sock\n"
	    "socket_mode = 0600\n"
	    "socket_group = zkelect\n"
	    "status_file = /var/lib/x/status\n"
	    "log_level = debug\n"
	    "max_clients = 65536\n", { NULL }, NULL, check_values },
	{ "overrides in order", BASE "[hooks]\npromote = x\n",
	    { "zookeeper.hosts=a:1,b:2", "election.mode = observer",
	    "election.service=other", "hooks.promote=echo a; echo b" },
	    NULL, check_overrides },
	{ "inline comments", BASE "data = 10.0.0.5:5432 ; advertised\n"
	    "[hooks] ; the hooks\n"
	    "promote = /usr/bin/promote\t; tab before it\n"
	    "demote = /usr/bin/demote;still-here\n"
	    "# a comment\n"
	    "; another\n", { NULL }, NULL, check_comments },
	{ "a section may appear twice", BASE "[zookeeper]\n"
	    "session_timeout = 6s\n", { NULL }, NULL, check_demote_default },
	{ "demote default follows session", "[zookeeper]\nhosts = a:1\n"
	    "session_timeout = 6s\n[election]\nservice = s\n", { NULL },
	    NULL, check_demote_default },
	{ "demote just under a third", BASE "[hooks]\ndemote_timeout = 3333\n",
	    { NULL }, NULL, check_demote_edge },
	{ "bool on", BASE "[hooks]\ndemote_on_start = ON\n", { NULL }, NULL,
	    check_bool_on },
	{ "bool 0", BASE "[hooks]\ndemote_on_start = 0\n", { NULL }, NULL,
	    check_bool_off },
	{ "bool false", BASE "[hooks]\ndemote_on_start = false\n", { NULL },
	    NULL, check_bool_off },
	{ "socket mode without 0", BASE "[control]\nsocket_mode = 660\n"
	    "log_level = err\n", { NULL }, NULL, check_mode_660 },
	{ "empty values unset", BASE "[hooks]\npromote =\ncheck=\nnotify =\n"
	    "[zookeeper]\nauth =\n[control]\nsocket_group =\n", { NULL },
	    NULL, check_empty_hooks },
	{ "notify hook", BASE "[hooks]\nnotify = /usr/bin/repoint "
	    "\"$ZKELECT_LEADER\"\n", { NULL }, NULL, check_notify },
	{ "root slash", BASE "[zookeeper]\nroot = /\n", { NULL }, NULL,
	    check_root_slash },
	{ "199-byte line", BASE "data = " X192 "\n", { NULL }, NULL,
	    check_long_line },
	{ "199-byte line, CRLF", "[zookeeper]\r\nhosts = a:1\r\n[election]\r\n"
	    "service = pg\r\ndata = " X192 "\r\n", { NULL }, NULL,
	    check_long_line },
	{ "last line without newline", BASE "data = " X192, { NULL }, NULL,
	    check_long_line },
	{ "indented keys", BASE "[hooks]\n  promote = p\n\ttimeout = 5s\n",
	    { NULL }, NULL, check_indented },
	{ "UTF-8 byte order mark", "\xef\xbb\xbf" BASE, { NULL }, NULL, NULL },
	/* inih splits a line at its first '=' or ':', and always has. */
	{ "key: value", BASE "id: a:b\ndata = 10.0.0.5:5432\n[hooks]\n"
	    "promote: /bin/true --a=b\n", { NULL }, NULL, check_colon },
	{ "blanks after a section", BASE "[hooks] \t\npromote: /bin/true "
	    "--a=b\n[election]\nid:a:b\ndata=10.0.0.5:5432\n", { NULL }, NULL,
	    check_colon },
	{ "preempt_delay of a day", BASE "preempt_delay = 1440m\n", { NULL },
	    NULL, check_preempt_day },
	{ "ipv6 and names", "[zookeeper]\n"
	    "hosts = ::1:2181,zk-2.example.com:2182\n[election]\nservice=pg\n",
	    { NULL }, NULL, check_ipv6 },

	/* File-level errors. */
	{ "missing file", NULL, { NULL },
	    "@: cannot read: No such file or directory", NULL },
	{ "empty file", "", { NULL },
	    "@: zookeeper.hosts: required key missing", NULL },
	{ "missing hosts", "[election]\nservice = pg\n", { NULL },
	    "@: zookeeper.hosts: required key missing", NULL },
	{ "missing service", "[zookeeper]\nhosts = a:1\n", { NULL },
	    "@: election.service: required key missing", NULL },
	{ "hosts given by -o", "[election]\nservice = pg\n",
	    { "zookeeper.hosts=a:1" }, NULL, NULL },
	{ "200-byte line", BASE "data = " X192 "x\n", { NULL },
	    "@:5: line longer than 199 bytes", NULL },
	{ "long line after a good one", BASE "id = a\n" X192 X8 "\n",
	    { NULL }, "@:6: line longer than 199 bytes", NULL },
	{ "NUL byte", BASE "id = a\0b\n", { NULL }, "@:5: NUL byte", NULL },

	/* Syntax. */
	{ "unknown section", BASE "[foo]\nbar = 1\n", { NULL },
	    "@:5: [foo]: unknown section", NULL },
	{ "unknown empty section", BASE "[hook]\n", { NULL },
	    "@:5: [hook]: unknown section", NULL },
	{ "unknown empty section after a byte order mark",
	    "\xef\xbb\xbf[nosuchsection]\n" BASE, { NULL },
	    "@:1: [nosuchsection]: unknown section", NULL },
	{ "byte order mark and an indented unknown section",
	    "\xef\xbb\xbf  [hook]\n" BASE, { NULL },
	    "@:1: [hook]: unknown section", NULL },
	{ "key after a section name", BASE "[hooks] promote = /bin/true\n",
	    { NULL }, "@:5: [hooks]: text after the section name", NULL },
	{ "text after a section name", BASE "[hooks]x\n", { NULL },
	    "@:5: [hooks]: text after the section name", NULL },
	{ "';' right after a section name", BASE "[hooks];x\n", { NULL },
	    "@:5: [hooks]: text after the section name", NULL },
	{ "'#' after a section name", BASE "[hooks] # x\n", { NULL },
	    "@:5: [hooks]: text after the section name", NULL },
	{ "text after a section name after a byte order mark",
	    "\xef\xbb\xbf[zookeeper] hosts = a:1\n" BASE, { NULL },
	    "@:1: [zookeeper]: text after the section name", NULL },
	{ "unknown key", BASE "foo = 1\n", { NULL },
	    "@:5: election.foo: unknown key", NULL },
	{ "key outside a section", "hosts = a:1\n", { NULL },
	    "@:1: hosts: key outside any section", NULL },
	{ "no equals", BASE "service\n", { NULL }, "@:5: syntax error", NULL },
	{ "no key name", BASE "= 1\n", { NULL }, "@:5: syntax error", NULL },
	{ "unclosed section", BASE "[hooks\n", { NULL }, "@:5: syntax error",
	    NULL },
	{ "syntax error before a bad value", BASE "junk\nmode = x\n", { NULL },
	    "@:5: syntax error", NULL },
	{ "bad value before a syntax error", BASE "mode = x\njunk\n", { NULL },
	    "@:5: election.mode: must be candidate or observer", NULL },
	{ "duplicate key", BASE "service = other\n", { NULL },
	    "@:5: election.service: duplicate key (first set on line 4)",
	    NULL },
	{ "key names are case-sensitive", BASE "Mode = observer\n", { NULL },
	    "@:5: election.Mode: unknown key", NULL },

	/* zookeeper.* */
	{ "hosts without port", "[zookeeper]\nhosts = zk1\n", { NULL },
	    "@:2: zookeeper.hosts: \"zk1\" is not host:port", NULL },
	{ "hosts port 0", "[zookeeper]\nhosts = zk1:2181,zk2:0\n", { NULL },
	    "@:2: zookeeper.hosts: bad port in \"zk2:0\" (1-65535)", NULL },
	{ "hosts port too big", "[zookeeper]\nhosts = zk1:65536\n", { NULL },
	    "bad port in \"zk1:65536\"", NULL },
	{ "hosts port zero-padded", "[zookeeper]\nhosts = a:000002181\n",
	    { NULL }, "bad port", NULL },
	{ "hosts empty entry", "[zookeeper]\nhosts = zk1:1,,zk2:2\n", { NULL },
	    "\"\" is not host:port", NULL },
	{ "hosts trailing comma", "[zookeeper]\nhosts = zk1:1,\n", { NULL },
	    "\"\" is not host:port", NULL },
	{ "hosts space", "[zookeeper]\nhosts = zk1:1, zk2:2\n", { NULL },
	    "bad host in \" zk2:2\"", NULL },
	{ "hosts chroot", "[zookeeper]\nhosts = zk1:1/app\n", { NULL },
	    "chroot suffix is not supported", NULL },
	{ "hosts empty", "[zookeeper]\nhosts =\n", { NULL },
	    "@:2: zookeeper.hosts: must not be empty", NULL },
	{ "session_timeout bad unit",
	    BASE "[zookeeper]\nsession_timeout = 1h\n", { NULL },
	    "@:6: zookeeper.session_timeout: not a duration", NULL },
	{ "session_timeout not a duration", "[zookeeper]\nhosts = a:1\n"
	    "session_timeout = 10h\n", { NULL },
	    "@:3: zookeeper.session_timeout: not a duration (use ms, s or m)",
	    NULL },
	{ "session_timeout zero", "[zookeeper]\nhosts = a:1\n"
	    "session_timeout = 0s\n", { NULL },
	    "@:3: zookeeper.session_timeout: must be greater than zero", NULL },
	{ "session_timeout negative", "[zookeeper]\nhosts = a:1\n"
	    "session_timeout = -5s\n", { NULL },
	    "@:3: zookeeper.session_timeout: must not be negative", NULL },
	{ "session_timeout too long", "[zookeeper]\nhosts = a:1\n"
	    "session_timeout = 36000000s\n", { NULL }, "out of range", NULL },
	{ "root relative", "[zookeeper]\nroot = zkelectd\n", { NULL },
	    "@:2: zookeeper.root: must start with '/'", NULL },
	{ "root trailing slash", "[zookeeper]\nroot = /a/\n", { NULL },
	    "must not end with '/'", NULL },
	{ "root double slash", "[zookeeper]\nroot = /a//b\n", { NULL },
	    "must not contain '//'", NULL },
	{ "root dot-dot", "[zookeeper]\nroot = /a/../b\n", { NULL },
	    "must not contain \".\" or \"..\"", NULL },
	{ "root reserved", "[zookeeper]\nroot = /zookeeper/x\n", { NULL },
	    "reserved", NULL },
	{ "auth not digest", "[zookeeper]\nauth = sasl:x\n", { NULL },
	    "@:2: zookeeper.auth: must be digest:user:password", NULL },
	{ "auth no password", "[zookeeper]\nauth = digest:user\n", { NULL },
	    "must be digest:user:password", NULL },
	{ "auth empty user", "[zookeeper]\nauth = digest::pw\n", { NULL },
	    "must be digest:user:password", NULL },
	{ "auth empty password", "[zookeeper]\nauth = digest:user:\n", { NULL },
	    "must be digest:user:password", NULL },

	/* election.* */
	{ "service with slash", "[election]\nservice = a/b\n", { NULL },
	    "@:2: election.service: must be 1 to 64 of the characters "
	    "A-Z a-z 0-9 . _ -", NULL },
	{ "service dot-dot", "[election]\nservice = ..\n", { NULL },
	    "@:2: election.service: must not be \".\" or \"..\"", NULL },
	{ "service empty", "[election]\nservice =\n", { NULL },
	    "election.service: must be 1 to 64", NULL },
	{ "service 65 bytes", "[election]\nservice = " X64 "x\n", { NULL },
	    "election.service: must be 1 to 64", NULL },
	{ "service 64 bytes", "[zookeeper]\nhosts=a:1\n[election]\nservice = "
	    X64 "\n", { NULL }, NULL, NULL },
	{ "id empty", BASE "id =\n", { NULL },
	    "@:5: election.id: must not be empty", NULL },
	{ "id too long", BASE "id = " X128 "x\n", { NULL },
	    "@:5: election.id: longer than 128 bytes", NULL },
	{ "id with tab", BASE "id = a\tb\n", { NULL },
	    "election.id: must be printable ASCII", NULL },
	{ "id with newline by -o", BASE, { "election.id=a\nb" },
	    "@-o election.id: must be printable ASCII", NULL },
	{ "id with a space", BASE "id = db1 epoch=999999\n", { NULL },
	    "@:5: election.id: must not hold spaces or '=' (the watch line "
	    "is words of key=value)", NULL },
	{ "id with a space by -o", BASE, { "election.id=db1 epoch=9" },
	    "@-o election.id: must not hold spaces or '='", NULL },
	{ "id with =", BASE "id = xepoch=5\n", { NULL },
	    "@:5: election.id: must not hold spaces or '='", NULL },
	{ "id with punctuation", BASE "id = db-1.example_x:5432@a/b\n",
	    { NULL }, NULL, NULL },
	{ "data too long by -o", BASE,
	    { "election.data=" X128 X128 X128 X128 "x" },
	    "@-o election.data: longer than 512 bytes", NULL },
	{ "bad mode", BASE "mode = leader\n", { NULL },
	    "@:5: election.mode: must be candidate or observer", NULL },
	{ "negative grace", BASE "disconnect_grace = -1\n", { NULL },
	    "election.disconnect_grace: must not be negative", NULL },
	{ "preempt_delay over a day", BASE "preempt_delay = 1441m\n",
	    { NULL }, "@:5: election.preempt_delay: out of range (at most "
	    "86400000ms) (or never)", NULL },

	/* hooks.* */
	{ "hook timeout zero", BASE "[hooks]\ntimeout = 0\n", { NULL },
	    "@:6: hooks.timeout: must be greater than zero", NULL },
	{ "check_interval zero", BASE "[hooks]\ncheck_interval = 0ms\n",
	    { NULL }, "hooks.check_interval: must be greater than zero", NULL },
	{ "demote_timeout too long", "[zookeeper]\nhosts = a:1\n"
	    "session_timeout = 9s\n[election]\nservice = s\n[hooks]\n"
	    "demote_timeout = 3s\n", { NULL },
	    "@:7: hooks.demote_timeout: 3000ms is not less than a third of "
	    "zookeeper.session_timeout (9000ms)", NULL },
	{ "demote_timeout set before session_timeout", BASE "[hooks]\n"
	    "demote_timeout = 2s\n[zookeeper]\nsession_timeout = 5s\n",
	    { NULL },
	    "@:6: hooks.demote_timeout: 2000ms is not less than a third of "
	    "zookeeper.session_timeout (5000ms)", NULL },
	{ "demote_timeout too long by -o", BASE,
	    { "hooks.demote_timeout=4s" },
	    "@-o hooks.demote_timeout: 4000ms is not less than a third of "
	    "zookeeper.session_timeout (10000ms)", NULL },
	{ "demote_timeout made too long by session -o",
	    BASE "[hooks]\ndemote_timeout = 3s\n",
	    { "zookeeper.session_timeout=9s" },
	    "@:6: hooks.demote_timeout: 3000ms is not less than", NULL },
	{ "demote_timeout zero", BASE "[hooks]\ndemote_timeout = 0\n", { NULL },
	    "hooks.demote_timeout: must be greater than zero", NULL },
	{ "check_fall zero", BASE "[hooks]\ncheck_fall = 0\n", { NULL },
	    "@:6: hooks.check_fall: out of range (1-1000)", NULL },
	{ "check_rise junk", BASE "[hooks]\ncheck_rise = 2x\n", { NULL },
	    "@:6: hooks.check_rise: not a number (1-1000)", NULL },
	{ "retry_backoff negative", BASE "[hooks]\nretry_backoff = -1s\n",
	    { NULL }, "hooks.retry_backoff: must not be negative", NULL },
	{ "bad bool", BASE "[hooks]\ndemote_on_start = maybe\n", { NULL },
	    "@:6: hooks.demote_on_start: must be yes or no", NULL },

	/* control.* */
	{ "relative socket", BASE "[control]\nsocket = run/x.sock\n", { NULL },
	    "@:6: control.socket: must be an absolute path", NULL },
	{ "socket too long", BASE "[control]\nsocket = /" X64 X64 "\n",
	    { NULL }, "control.socket: longer than 107 bytes", NULL },
	{ "socket is a directory", BASE "[control]\nsocket = /run/\n", { NULL },
	    "must name a file", NULL },
	{ "relative status file", BASE "[control]\nstatus_file = x\n", { NULL },
	    "control.status_file: must be an absolute path", NULL },
	{ "socket_mode not octal", BASE "[control]\nsocket_mode = 0680\n",
	    { NULL }, "@:6: control.socket_mode: must be an octal mode such "
	    "as 0660", NULL },
	{ "socket_mode too big", BASE "[control]\nsocket_mode = 1777\n",
	    { NULL }, "control.socket_mode: must be at most 0777", NULL },
	{ "socket_mode words", BASE "[control]\nsocket_mode = rw\n", { NULL },
	    "must be an octal mode", NULL },
	{ "socket_group with space", BASE "[control]\nsocket_group = a b\n",
	    { NULL }, "control.socket_group: must be a group name", NULL },
	{ "bad log level", BASE "[control]\nlog_level = verbose\n", { NULL },
	    "@:6: control.log_level: must be debug, info, notice, warning "
	    "or err", NULL },
	{ "max_clients zero", BASE "[control]\nmax_clients = 0\n", { NULL },
	    "control.max_clients: out of range (1-65536)", NULL },
	{ "max_clients too many", BASE "[control]\nmax_clients = 65537\n",
	    { NULL }, "control.max_clients: out of range", NULL },

	/* The files the keys name: none may stand where another is. */
	{ "status file is the socket", BASE "[control]\nsocket = /x/a.sock\n"
	    "status_file = /x//./a.sock\n", { NULL },
	    "@:7: control.status_file: /x//./a.sock is also control.socket "
	    "(/x/a.sock)", NULL },
	{ "status file is the socket, set first", BASE "[control]\n"
	    "status_file = /x/a.sock\nsocket = /x/a.sock\n", { NULL },
	    "@:6: control.status_file: /x/a.sock is also control.socket", NULL },
	{ "status file is the default socket", BASE "[control]\n"
	    "status_file = /run/zkelectd/pg.sock\n", { NULL },
	    "@:6: control.status_file: /run/zkelectd/pg.sock is also "
	    "control.socket", NULL },
	{ "socket is the default status file", BASE "[control]\n"
	    "socket = /run/zkelectd/pg.status\n", { NULL },
	    "@:6: control.socket: /run/zkelectd/pg.status is also "
	    "control.status_file", NULL },
	{ "status file is the socket by -o", BASE, { "control.status_file="
	    "/run/zkelectd/pg.sock" }, "@-o control.status_file: "
	    "/run/zkelectd/pg.sock is also control.socket", NULL },
	{ "status file is the session file", BASE "[control]\n"
	    "status_file = /run/zkelectd/pg.session\n", { NULL },
	    "@:6: control.status_file: /run/zkelectd/pg.session is also the "
	    "session file of control.socket /run/zkelectd/pg.sock", NULL },
	{ "status file is the session file of a socket without .sock", BASE
	    "[control]\nsocket = /x/ctl\nstatus_file = /x/ctl.session\n",
	    { NULL }, "@:7: control.status_file: /x/ctl.session is also the "
	    "session file of control.socket /x/ctl", NULL },
	{ "socket's session file is the status file", BASE "[control]\n"
	    "socket = /run/zkelectd/x\n", { "control.status_file="
	    "/run/zkelectd/x.session" },
	    "@-o control.status_file: /run/zkelectd/x.session is also", NULL },
	{ "status file's temporary copy is the socket", BASE "[control]\n"
	    "socket = /x/a.tmp\nstatus_file = /x/a\n", { NULL },
	    "@:7: control.status_file: /x/a is written through /x/a.tmp, "
	    "which is also control.socket", NULL },
	{ "socket is the default status file's temporary copy", BASE
	    "[control]\nsocket = /run/zkelectd/pg.status.tmp\n", { NULL },
	    "@:6: control.socket: /run/zkelectd/pg.status.tmp is also the "
	    "temporary copy of control.status_file "
	    "(/run/zkelectd/pg.status.tmp)", NULL },
	{ "status file is the session file's temporary copy", BASE
	    "[control]\nstatus_file = /run/zkelectd/pg.session.tmp\n",
	    { NULL }, "@:6: control.status_file: /run/zkelectd/pg.session.tmp "
	    "is also the temporary copy of the session file of "
	    "control.socket /run/zkelectd/pg.sock", NULL },
	{ "status file beside the socket", BASE "[control]\n"
	    "socket = /x/pg.sock\nstatus_file = /x/pg.sock.status\n", { NULL },
	    NULL, NULL },

	/* control.http_listen: repeatable, comma-separated. */
	{ "http_listen list and repeat", BASE "[control]\n"
	    "http_listen = 127.0.0.1:8008 , [::1]:8008\nhttp_listen = *:9\n",
	    { NULL }, NULL, check_listen },
	{ "http_listen -o replaces the file's", BASE "[control]\n"
	    "http_listen = 127.0.0.1:8008\n",
	    { "control.http_listen=10.1.2.3:80", "control.http_listen=[::]:81" },
	    NULL, check_listen_override },
	{ "http_listen empty -o removes it", BASE "[control]\n"
	    "http_listen = 127.0.0.1:8008\n", { "control.http_listen=" },
	    NULL, check_listen_none },
	{ "http_listen unset", BASE, { NULL }, NULL, check_listen_none },
	{ "http_listen host name", BASE "[control]\nhttp_listen = web:80\n",
	    { NULL }, "@:6: control.http_listen: \"web:80\": not a numeric "
	    "address", NULL },
	{ "http_listen bare IPv6", BASE "[control]\nhttp_listen = ::1:80\n",
	    { NULL }, "an IPv6 address takes brackets", NULL },
	{ "http_listen IPv4 in brackets", BASE "[control]\n"
	    "http_listen = [127.0.0.1]:80\n", { NULL }, "not a numeric", NULL },
	{ "http_listen no port", BASE "[control]\nhttp_listen = 10.0.0.1\n",
	    { NULL }, "\"10.0.0.1\" is not ADDR:PORT", NULL },
	{ "http_listen port zero", BASE "[control]\nhttp_listen = *:0\n",
	    { NULL }, "bad port in \"*:0\" (1-65535)", NULL },
	{ "http_listen port junk", BASE "[control]\nhttp_listen = *:80x\n",
	    { NULL }, "bad port", NULL },
	{ "http_listen bracket junk", BASE "[control]\n"
	    "http_listen = [::1]x:80\n", { NULL }, "is not [IPv6]:PORT", NULL },
	{ "http_listen empty item", BASE "[control]\n"
	    "http_listen = *:80,,*:81\n", { NULL }, "empty address", NULL },
	{ "http_listen twice", BASE "[control]\nhttp_listen = *:80\n"
	    "http_listen = 0.0.0.0:80\n", { NULL },
	    "@:7: control.http_listen: 0.0.0.0:80 listed twice", NULL },
	{ "http_listen too many", BASE "[control]\nhttp_listen = "
	    "*:1,*:2,*:3,*:4,*:5,*:6,*:7,*:8,*:9,*:10,*:11,*:12,*:13,*:14,"
	    "*:15,*:16,*:17\n", { NULL }, "more than 16 addresses", NULL },

	/* Overrides. */
	{ "override without =", BASE, { "election.mode" },
	    "@-o election.mode: must be section.key=value", NULL },
	{ "override without dot", BASE, { "mode=observer" },
	    "@-o mode: must be section.key=value", NULL },
	{ "override bad value", BASE, { "election.mode=leader" },
	    "@-o election.mode: must be candidate or observer", NULL },
	{ "override unknown key", BASE, { "election.foo=1" },
	    "@-o election.foo: unknown key", NULL },
	{ "override unknown section", BASE, { "foo.bar=1" },
	    "@-o foo.bar: unknown section", NULL },
	{ "override does not rescue a bad file", BASE "mode = x\n",
	    { "election.mode=observer" }, "@:5: election.mode", NULL },
	{ "later override wins", BASE "mode = observer\n",
	    { "election.mode=observer", "election.mode=candidate" }, NULL,
	    check_candidate },
};

static char *
write_temp(const char *contents, size_t len)
{
	char *path = strdup("/tmp/test_config.XXXXXX");
	int fd;

	assert_non_null(path);
	fd = mkstemp(path);
	assert_true(fd != -1);
	assert_int_equal(write(fd, contents, len), (ssize_t)len);
	assert_int_equal(close(fd), 0);
	return path;
}

/* The cases' contents are string literals; one holds a NUL on purpose. */
static size_t
case_length(const struct config_case *c)
{
	size_t len = strlen(c->file);

	if (strcmp(c->name, "NUL byte") == 0)
		return len + 1 + strlen(c->file + len + 1);
	return len;
}

static int
is_zero(const void *p, size_t len)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i] != 0)
			return 0;
	return 1;
}

static void
test_table(void **state)
{
	const struct config_case *c;
	struct config cfg;
	char err[1024], want[1024];
	char *path;
	size_t i, n;
	int rv;

	(void)state;
	for (i = 0; i < sizeof(config_cases) / sizeof(config_cases[0]); i++) {
		c = &config_cases[i];
		if (c->file != NULL)
			path = write_temp(c->file, case_length(c));
		else
			path = strdup("/nonexistent/zkelectd.conf");
		for (n = 0; n < 4 && c->overrides[n] != NULL; n++)
			;
		memset(&cfg, 0xa5, sizeof(cfg));
		rv = config_load(&cfg, path, (char *const *)c->overrides, n,
		    err, sizeof(err));
		if (c->file != NULL)
			assert_int_equal(unlink(path), 0);
		if (c->error == NULL) {
			if (rv != 0)
				fail_msg("%s: unexpected error: %s", c->name,
				    err);
			assert_string_equal(cfg.path, path);
			if (c->check != NULL)
				c->check(&cfg);
			config_free(&cfg);
			assert_true(is_zero(&cfg, sizeof(cfg)));
		} else {
			if (rv != -1)
				fail_msg("%s: loaded, expected \"%s\"", c->name,
				    c->error);
			if (!is_zero(&cfg, sizeof(cfg)))
				fail_msg("%s: struct not zeroed", c->name);
			if (c->error[0] == '@') {
				(void)snprintf(want, sizeof(want), "%s%s",
				    c->error[1] == '-' ? "" : path,
				    c->error + 1);
				if (strncmp(want, err, strlen(want)) != 0)
					fail_msg("%s:\n got \"%s\"\n"
					    "want \"%s\"", c->name, err, want);
			} else if (strstr(err, c->error) == NULL)
				fail_msg("%s:\n got \"%s\"\nwant \"...%s...\"",
				    c->name, err, c->error);
			if (strchr(err, '\n') != NULL)
				fail_msg("%s: error has a newline", c->name);
		}
		free(path);
	}
}

static void
test_defaults(void **state)
{
	struct config cfg;
	char err[256], host[256];
	char *path, *epath;

	(void)state;
	path = write_temp(BASE, strlen(BASE));
	assert_int_equal(config_load(&cfg, path, NULL, 0, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_string_equal(cfg.hosts, "zk1:2181");
	assert_int_equal(cfg.session_timeout_ms, 10000);
	assert_string_equal(cfg.root, "/zkelectd");
	assert_null(cfg.auth);
	assert_string_equal(cfg.service, "pg");
	assert_int_equal(gethostname(host, sizeof(host)), 0);
	assert_string_equal(cfg.id, host);
	assert_string_equal(cfg.data, "");
	assert_int_equal(cfg.mode, CONFIG_MODE_CANDIDATE);
	assert_int_equal(cfg.disconnect_grace_ms, -1);	/* lease */
	assert_int_equal(cfg.tick_ms, 2000);
	assert_null(cfg.hook_promote);
	assert_null(cfg.hook_demote);
	assert_null(cfg.hook_fence);
	assert_null(cfg.hook_check);
	assert_int_equal(cfg.hook_timeout_ms, 30000);
	assert_int_equal(cfg.demote_timeout_ms, 2500);
	assert_int_equal(cfg.check_interval_ms, 5000);
	assert_int_equal(cfg.check_fall, 3);
	assert_int_equal(cfg.check_rise, 2);
	assert_int_equal(cfg.retry_backoff_ms, 5000);
	assert_int_equal(cfg.demote_on_start, 1);
	assert_string_equal(cfg.socket_path, "/run/zkelectd/pg.sock");
	assert_int_equal(cfg.socket_mode, 0660);
	assert_null(cfg.socket_group);
	assert_string_equal(cfg.status_file, "/run/zkelectd/pg.status");
	assert_int_equal(cfg.log_level, LOG_INFO);
	assert_int_equal(cfg.max_clients, 256);
	epath = config_election_path(&cfg);
	assert_string_equal(epath, "/zkelectd/pg");
	free(epath);
	config_free(&cfg);
	assert_int_equal(unlink(path), 0);
	free(path);
}

static void
test_unreadable(void **state)
{
	struct config cfg;
	char err[256];

	(void)state;
	assert_int_equal(config_load(&cfg, "/tmp", NULL, 0, err, sizeof(err)),
	    -1);
	assert_string_equal(err, "/tmp: cannot read: Is a directory");
	assert_true(is_zero(&cfg, sizeof(cfg)));
}

/* A failed reload of a good config into a fresh struct leaves the old one. */
static void
test_reload_keeps_old(void **state)
{
	struct config old, new;
	char err[256];
	char *good, *bad;

	(void)state;
	good = write_temp(BASE, strlen(BASE));
	bad = write_temp(BASE "mode = x\n", strlen(BASE "mode = x\n"));
	assert_int_equal(config_load(&old, good, NULL, 0, err, sizeof(err)), 0);
	assert_int_equal(config_load(&new, bad, NULL, 0, err, sizeof(err)), -1);
	assert_true(is_zero(&new, sizeof(new)));
	assert_string_equal(old.service, "pg");
	assert_string_equal(old.path, good);
	config_free(&new);
	config_free(&old);
	assert_int_equal(unlink(good), 0);
	assert_int_equal(unlink(bad), 0);
	free(good);
	free(bad);
}

static void
test_too_large(void **state)
{
	struct config cfg;
	char err[256], want[300];
	char *buf, *path;
	size_t len = 1024 * 1024 + 1;

	(void)state;
	buf = malloc(len);
	assert_non_null(buf);
	memset(buf, '\n', len);
	path = write_temp(buf, len);
	assert_int_equal(config_load(&cfg, path, NULL, 0, err, sizeof(err)),
	    -1);
	(void)snprintf(want, sizeof(want), "%s: cannot read: %s", path,
	    strerror(EFBIG));
	assert_string_equal(err, want);
	/* One byte less is read, and found to lack the required keys. */
	assert_int_equal(truncate(path, (off_t)len - 1), 0);
	assert_int_equal(config_load(&cfg, path, NULL, 0, err, sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "zookeeper.hosts: required key missing"));
	assert_int_equal(unlink(path), 0);
	free(path);
	free(buf);
}

/* Loads path, written with text, and expects err to be want. */
static void
load_fails_with(const char *path, const char *text, const char *want)
{
	struct config cfg;
	char err[1024];
	FILE *f;

	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	if (config_load(&cfg, path, NULL, 0, err, sizeof(err)) != -1)
		fail_msg("%s loaded, expected \"%s\"", path, want);
	assert_string_equal(err, want);
}

/*
 * The configuration file is one of the files its keys must not name, read
 * from -c as given: relative to the working directory, or through "//".
 */
static void
test_path_is_the_config_file(void **state)
{
	char dir[] = "/tmp/test_config.XXXXXX", cwd[PATH_MAX];
	char path[64], text[256], want[256];

	(void)state;
	assert_non_null(mkdtemp(dir));
	(void)snprintf(path, sizeof(path), "%s/z.conf", dir);
	(void)snprintf(text, sizeof(text), BASE "[control]\n"
	    "status_file = %s//./z.conf\n", dir);
	(void)snprintf(want, sizeof(want), "%s:6: control.status_file: "
	    "%s//./z.conf is also the configuration file (%s)", path, dir,
	    path);
	load_fails_with(path, text, want);

	(void)snprintf(text, sizeof(text), BASE "[control]\n"
	    "socket = %s/z.conf\n", dir);
	(void)snprintf(want, sizeof(want), "z.conf:6: control.socket: "
	    "%s/z.conf is also the configuration file (z.conf)", dir);
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(dir), 0);
	load_fails_with("z.conf", text, want);
	assert_int_equal(chdir(cwd), 0);

	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* Two spellings of one directory that exists are one directory. */
static void
test_path_through_a_link(void **state)
{
	char dir[] = "/tmp/test_config.XXXXXX";
	char real[64], alias[64], path[64], text[256], want[256];

	(void)state;
	assert_non_null(mkdtemp(dir));
	(void)snprintf(real, sizeof(real), "%s/real", dir);
	(void)snprintf(alias, sizeof(alias), "%s/link", dir);
	(void)snprintf(path, sizeof(path), "%s/z.conf", dir);
	assert_int_equal(mkdir(real, 0700), 0);
	assert_int_equal(symlink("real", alias), 0);
	(void)snprintf(text, sizeof(text), BASE "[control]\n"
	    "socket = %s/a.sock\nstatus_file = %s/a.sock\n", real, alias);
	(void)snprintf(want, sizeof(want), "%s:7: control.status_file: "
	    "%s/a.sock is also control.socket (%s/a.sock)", path, alias, real);
	load_fails_with(path, text, want);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(unlink(alias), 0);
	assert_int_equal(rmdir(real), 0);
	assert_int_equal(rmdir(dir), 0);
}

static void
test_small_error_buffer(void **state)
{
	struct config cfg;
	char err[8];

	(void)state;
	assert_int_equal(config_load(&cfg, "/nonexistent", NULL, 0, err,
	    sizeof(err)), -1);
	assert_string_equal(err, "/nonexi");
	assert_int_equal(config_load(&cfg, "/nonexistent", NULL, 0, NULL, 0),
	    -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_unreadable),
		cmocka_unit_test(test_reload_keeps_old),
		cmocka_unit_test(test_too_large),
		cmocka_unit_test(test_path_is_the_config_file),
		cmocka_unit_test(test_path_through_a_link),
		cmocka_unit_test(test_small_error_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
