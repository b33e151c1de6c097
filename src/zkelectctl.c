/*
 * zkelectctl: the command line client of zkelectd's control socket. This
 * file reads the options and the command's arguments and picks the socket;
 * ctlclient.c sends one command line, reads the answer until the daemon
 * closes and turns it into output and an exit code that shell scripts can
 * test.
 *
 * How long to wait: most commands are answered at once, so a daemon that
 * says nothing for ZKELECTCTL_TIMEOUT_MS (or $ZKELECTCTL_TIMEOUT) is taken
 * for stuck. switchover, resign and pause are answered once the election
 * has done them, which has no bound a client could know (hooks' timeouts,
 * a ZooKeeper away): without -t they wait for as long as the daemon itself
 * keeps answering, which ctlclient.c checks with a ping at that interval.
 */
#include <getopt.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctlclient.h"
#include "proto.h"
#include "util.h"
#include "xmalloc.h"

#ifndef ZKELECTD_VERSION
#define ZKELECTD_VERSION "unknown"
#endif

#define ZKELECTCTL_TIMEOUT_MS	30000
#define ZKELECTCTL_TIMEOUT_ENV	"ZKELECTCTL_TIMEOUT"
#define ZKELECTCTL_SERVICE_MAX	64

static const struct zkelectctl_cmd zkelectctl_cmds[] = {
	{ "ping", KIND_PLAIN, "", "check that the daemon answers: pong" },
	{ "version", KIND_PLAIN, "", "the daemon's version" },
	{ "role", KIND_PLAIN, "", "this node's role, one word" },
	{ "status", KIND_JSON, " [--json]",
	    "key=value status lines, or one JSON object" },
	{ "leader", KIND_PLAIN, "", "the leader's id=, data=, epoch= lines" },
	{ "members", KIND_JSON, " [--json]",
	    "queue order: seq, id, data; JSON adds priority" },
	{ "resign", KIND_HANDOFF, "",
	    "hand leadership over and rejoin at the back: ok" },
	{ "pause", KIND_HANDOFF, "", "leave the election (role observer): ok" },
	{ "resume", KIND_PLAIN, "", "rejoin the election: ok" },
	{ "metrics", KIND_PLAIN, "", "Prometheus text exposition" },
	{ "history", KIND_PLAIN, "",
	    "last role changes: time, from, to, reason, epoch, leader" },
	{ "watch", KIND_WATCH, "",
	    "print role=R leader=ID epoch=N time=T on every change" },
	{ "is-leader", KIND_IS_LEADER, "",
	    "exit 0 when this node is the leader, 1 when not" },
	{ "wait", KIND_WAIT, " ROLE [-t DURATION]",
	    "wait until the role is ROLE; exit 1 on timeout" },
	{ "switchover", KIND_SWITCHOVER, " [--] ID",
	    "leader: hand over to candidate ID: ok once ID leads" },
};

static const char *zkelectctl_roles[] = {
	"leader", "follower", "promoting", "demoting", "observer", "unknown",
	"stopped",
};

static void
zkelectctl_usage(FILE *f)
{
	size_t i;
	int n;

	(void)fprintf(f,
	    "usage: zkelectctl [-q] [-s SOCKET | -n SERVICE] [-t DURATION] "
	    "COMMAND [ARGS]\n\nCommands:\n");
	for (i = 0; i < sizeof(zkelectctl_cmds) / sizeof(zkelectctl_cmds[0]);
	    i++) {
		n = fprintf(f, "  %s%s", zkelectctl_cmds[i].name,
		    zkelectctl_cmds[i].args);
		if (n > 24)
			(void)fprintf(f, "\n%26s", "");
		else
			(void)fprintf(f, "%*s", 26 - (n < 0 ? 0 : n), "");
		(void)fprintf(f, "%s\n", zkelectctl_cmds[i].help);
	}
	(void)fprintf(f, "\nOptions:\n"
	    "  -s, --socket SOCKET     control socket path\n"
	    "  -n, --service SERVICE   use " PROTO_RUNDIR "/SERVICE.sock\n"
	    "  -t, --timeout DURATION  how long to wait for the answer "
	    "(default 30s,\n"
	    "                          or $" ZKELECTCTL_TIMEOUT_ENV "); without "
	    "it, switchover,\n"
	    "                          resign and pause wait on while the "
	    "daemon\n"
	    "                          answers ping that often; for wait and "
	    "watch,\n"
	    "                          how long to wait (default: forever); "
	    "ms, s, m\n"
	    "  -q, --quiet             is-leader and wait print nothing\n"
	    "  -h, --help              print this help\n"
	    "  -V, --version           print the version\n"
	    "\nWithout -s or -n, the only socket in " PROTO_RUNDIR " is used.\n"
	    "Exit codes: 0 ok, 1 no (not leader, wait timed out), 2 usage,\n"
	    "3 daemon unreachable, 4 the daemon answered an error.\n");
}

static void __attribute__((noreturn))
zkelectctl_usage_error(void)
{
	(void)fprintf(stderr, "Try 'zkelectctl --help'.\n");
	exit(EXIT_USAGE);
}

static const struct zkelectctl_cmd *
zkelectctl_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(zkelectctl_cmds) / sizeof(zkelectctl_cmds[0]);
	    i++)
		if (strcmp(zkelectctl_cmds[i].name, name) == 0)
			return &zkelectctl_cmds[i];
	return NULL;
}

static int
zkelectctl_role_valid(const char *role)
{
	size_t i;

	for (i = 0; i < sizeof(zkelectctl_roles) / sizeof(zkelectctl_roles[0]);
	    i++)
		if (strcmp(zkelectctl_roles[i], role) == 0)
			return 1;
	return 0;
}

/* from: where s was found, for the message ("" for the command line). */
static int64_t
zkelectctl_duration_from(const char *s, const char *from)
{
	const char *why;
	int64_t ms;

	if (parse_duration_ms(s, 1, INT64_MAX / 2, &ms, &why) == -1) {
		ctlclient_warnx("bad duration '%s'%s: %s", s, from, why);
		zkelectctl_usage_error();
	}
	return ms;
}

static int64_t
zkelectctl_duration(const char *s)
{
	return zkelectctl_duration_from(s, "");
}

/* The wait for an answer when -t says none. */
static int64_t
zkelectctl_default_timeout(void)
{
	const char *s = getenv(ZKELECTCTL_TIMEOUT_ENV);

	if (s == NULL || *s == '\0')
		return ZKELECTCTL_TIMEOUT_MS;
	return zkelectctl_duration_from(s, " in $" ZKELECTCTL_TIMEOUT_ENV);
}

static int
zkelectctl_service_valid(const char *s)
{
	size_t len = strlen(s);

	return len >= 1 && len <= ZKELECTCTL_SERVICE_MAX &&
	    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789._-") == len;
}

/* The only socket in the run directory, when there is exactly one. */
static char *
zkelectctl_default_socket(void)
{
	glob_t g;
	char *path;
	int rc;

	rc = glob(PROTO_RUNDIR "/*.sock", 0, NULL, &g);
	if (rc == GLOB_NOMATCH) {
		ctlclient_warnx("no control socket in %s (is zkelectd "
		    "running?); use -s SOCKET or -n SERVICE", PROTO_RUNDIR);
		exit(EXIT_UNREACHABLE);
	}
	if (rc != 0) {
		ctlclient_warnx("cannot list %s", PROTO_RUNDIR);
		exit(EXIT_UNREACHABLE);
	}
	if (g.gl_pathc > 1) {
		ctlclient_warnx("%zu control sockets in %s; choose one with "
		    "-n SERVICE or -s SOCKET", (size_t)g.gl_pathc,
		    PROTO_RUNDIR);
		globfree(&g);
		zkelectctl_usage_error();
	}
	path = xstrdup(g.gl_pathv[0]);
	globfree(&g);
	return path;
}

static void __attribute__((noreturn))
zkelectctl_unexpected(const struct zkelectctl *zc, const char *arg)
{
	ctlclient_warnx("%s: unexpected argument '%s'%s", zc->cmd->name, arg,
	    zc->cmd->kind == KIND_SWITCHOVER && zc->target == NULL &&
	    arg[0] == '-' ? " (an ID that begins with '-' goes after --)" :
	    "");
	zkelectctl_usage_error();
}

/* An argument that is no option: json, a role, an ID. */
static void
zkelectctl_operand(struct zkelectctl *zc, const char *arg)
{
	if (zc->cmd->kind == KIND_JSON && !zc->json &&
	    strcmp(arg, "json") == 0)
		zc->json = 1;
	else if (zc->cmd->kind == KIND_SWITCHOVER && zc->target == NULL) {
		if (!id_valid(arg)) {
			ctlclient_warnx("switchover: bad id '%s' "
			    "(printable ASCII, at most 128)", arg);
			zkelectctl_usage_error();
		}
		zc->target = arg;
	} else if (zc->cmd->kind == KIND_WAIT && zc->role == NULL) {
		if (!zkelectctl_role_valid(arg)) {
			ctlclient_warnx("wait: unknown role '%s' (one of "
			    "leader, follower, promoting, demoting, "
			    "observer, unknown, stopped)", arg);
			zkelectctl_usage_error();
		}
		zc->role = arg;
	} else
		zkelectctl_unexpected(zc, arg);
}

/*
 * Arguments after the command: -t anywhere, a role, --json, a switchover's
 * ID. After "--" nothing is an option, so that an ID may begin with '-'.
 */
static void
zkelectctl_command_args(struct zkelectctl *zc, int argc, char **argv)
{
	const char *arg;
	int i, ended = 0;

	for (i = 0; i < argc; i++) {
		arg = argv[i];
		if (!ended && strcmp(arg, "--") == 0)
			ended = 1;
		else if (ended || arg[0] != '-')
			zkelectctl_operand(zc, arg);
		else if (strcmp(arg, "-t") == 0 ||
		    strcmp(arg, "--timeout") == 0) {
			if (++i == argc) {
				ctlclient_warnx("%s: %s needs a duration",
				    zc->cmd->name, arg);
				zkelectctl_usage_error();
			}
			zc->timeout_ms = zkelectctl_duration(argv[i]);
		} else if (strncmp(arg, "-t", 2) == 0 && arg[2] != '\0')
			zc->timeout_ms = zkelectctl_duration(arg + 2);
		else if (strncmp(arg, "--timeout=", 10) == 0)
			zc->timeout_ms = zkelectctl_duration(arg + 10);
		else if (zc->cmd->kind == KIND_JSON && !zc->json &&
		    strcmp(arg, "--json") == 0)
			zc->json = 1;
		else
			zkelectctl_unexpected(zc, arg);
	}
	if (zc->cmd->kind == KIND_SWITCHOVER && zc->target == NULL) {
		ctlclient_warnx("switchover: to which candidate? "
		    "(switchover ID)");
		zkelectctl_usage_error();
	}
	if (zc->cmd->kind == KIND_WAIT && zc->role == NULL) {
		ctlclient_warnx("wait: which role? (wait ROLE [-t DURATION])");
		zkelectctl_usage_error();
	}
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "socket", required_argument, NULL, 's' },
		{ "service", required_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	struct zkelectctl zc;
	const char *service = NULL, *socket_path = NULL;
	char *path = NULL, line[192];
	int ch, rc;

	memset(&zc, 0, sizeof(zc));
	zc.timeout_ms = -1;
	while ((ch = getopt_long(argc, argv, "+hVqs:n:t:", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'h':
			zkelectctl_usage(stdout);
			return EXIT_OK;
		case 'V':
			(void)printf("zkelectctl %s\n", ZKELECTD_VERSION);
			return EXIT_OK;
		case 'q':
			zc.quiet = 1;
			break;
		case 's':
			socket_path = optarg;
			break;
		case 'n':
			service = optarg;
			break;
		case 't':
			zc.timeout_ms = zkelectctl_duration(optarg);
			break;
		default:
			zkelectctl_usage_error();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 0) {
		zkelectctl_usage(stderr);
		return EXIT_USAGE;
	}
	if ((zc.cmd = zkelectctl_find(argv[0])) == NULL) {
		ctlclient_warnx("unknown command '%s'", argv[0]);
		zkelectctl_usage_error();
	}
	zkelectctl_command_args(&zc, argc - 1, argv + 1);

	if (service != NULL && socket_path != NULL) {
		ctlclient_warnx("-s and -n exclude each other");
		zkelectctl_usage_error();
	}
	if (service != NULL) {
		if (!zkelectctl_service_valid(service)) {
			ctlclient_warnx("bad service name '%s' (1 to %d of "
			    "A-Z a-z 0-9 . _ -)", service,
			    ZKELECTCTL_SERVICE_MAX);
			zkelectctl_usage_error();
		}
		(void)xasprintf(&path, "%s/%s.sock", PROTO_RUNDIR, service);
	} else if (socket_path != NULL)
		path = xstrdup(socket_path);
	else
		path = zkelectctl_default_socket();
	zc.path = path;

	switch (zc.cmd->kind) {
	case KIND_WAIT:
	case KIND_WATCH:
		zc.deadline = zc.timeout_ms < 0 ? -1 : now_ms() + zc.timeout_ms;
		rc = ctlclient_stream(&zc);
		break;
	default:
		if (zc.timeout_ms < 0) {
			zc.timeout_ms = zkelectctl_default_timeout();
			if (zc.cmd->kind == KIND_SWITCHOVER ||
			    zc.cmd->kind == KIND_HANDOFF)
				zc.probe_ms = zc.timeout_ms;
		}
		zc.deadline = now_ms() + zc.timeout_ms;
		if (zc.cmd->kind == KIND_SWITCHOVER)
			(void)snprintf(line, sizeof(line), "switchover %s\n",
			    zc.target);
		else
			(void)snprintf(line, sizeof(line), "%s%s\n",
			    zc.cmd->kind == KIND_IS_LEADER ? "role" :
			    zc.cmd->name, zc.json ? " json" : "");
		rc = ctlclient_oneshot(&zc, line);
		break;
	}
	free(path);
	return rc;
}
