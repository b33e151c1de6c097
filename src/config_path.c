/*
 * The files a configuration names must be distinct.  The status file, and
 * the session file kept beside the socket, are replaced by the rename of a
 * temporary copy, and whatever stands at that copy's name is unlinked
 * first: either file at the path of the socket or of the configuration
 * file would take that file's place at its first write, with nothing to
 * say so.  Paths are compared as written once "//" and "." components are
 * folded; two with the same last component whose directories both exist
 * are also compared by those directories' inodes, which catches /var/run
 * against /run.  Nothing else of the file system is looked at: the files
 * themselves, and often their directories, do not exist before the start.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config_int.h"
#include "session_file.h"
#include "status.h"
#include "xmalloc.h"

struct config_path_file {
	const char	*role;	/* as an error names it */
	const char	*own;	/* what the path is, said of its key */
	const char	*path;
	int		 key;	/* the key that sets it, -1: none */
	int		 tmp;	/* replaced through path STATUS_TMP_SUFFIX */
};

/*
 * path without empty or "." components.  A relative one (the configuration
 * file's, from -c) is taken from the working directory, or stays relative
 * when that cannot be had.
 */
static char *
config_path_fold(const char *path)
{
	char cwd[PATH_MAX], *full, *out, *o;
	const char *s, *e;

	if (path[0] != '/' && getcwd(cwd, sizeof(cwd)) != NULL)
		(void)xasprintf(&full, "%s/%s", cwd, path);
	else
		full = xstrdup(path);
	out = xmalloc(strlen(full) + 2);
	o = out;
	for (s = full; *s != '\0'; s = e) {
		while (*s == '/')
			s++;
		e = strchrnul(s, '/');
		if (e == s || (e - s == 1 && s[0] == '.'))
			continue;
		if (o > out || full[0] == '/')
			*o++ = '/';
		memcpy(o, s, (size_t)(e - s));
		o += e - s;
	}
	if (o == out)
		*o++ = full[0] == '/' ? '/' : '.';
	*o = '\0';
	free(full);
	return out;
}

/* The directory of a folded path. */
static char *
config_path_dir(const char *path)
{
	char *dir, *slash;

	dir = xstrdup(path);
	slash = strrchr(dir, '/');
	/* A folded path starts with '/', which the top's entries keep. */
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	return dir;
}

/* Whether the directories of two folded paths exist and are one. */
static int
config_path_same_dir(const char *a, const char *b)
{
	struct stat sa, sb;
	char *da, *db;
	int same;

	da = config_path_dir(a);
	db = config_path_dir(b);
	same = stat(da, &sa) == 0 && stat(db, &sb) == 0 &&
	    sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	free(da);
	free(db);
	return same;
}

static int
config_path_same(const char *a, const char *b)
{
	char *fa, *fb;
	int same;

	fa = config_path_fold(a);
	fb = config_path_fold(b);
	same = strcmp(fa, fb) == 0 || (fa[0] == '/' && fb[0] == '/' &&
	    strcmp(strrchr(fa, '/'), strrchr(fb, '/')) == 0 &&
	    config_path_same_dir(fa, fb));
	free(fa);
	free(fb);
	return same;
}

/* " (path)" when the reader cannot tell it from what the message said. */
static const char *
config_path_aside(char *buf, size_t len, const char *path, const char *said)
{
	if (strcmp(path, said) == 0)
		return "";
	(void)snprintf(buf, len, " (%s)", path);
	return buf;
}

/* How two files clash, said of the first. */
enum config_path_how {
	CONFIG_PATH_APART,
	CONFIG_PATH_SAME,
	CONFIG_PATH_MY_TMP,	/* the first's temporary copy is the second */
	CONFIG_PATH_ITS_TMP,	/* the second's is the first */
};

/* Says in why how x, the file of the key in the wrong, clashes with y. */
static void
config_path_why(const struct config_path_file *x,
    const struct config_path_file *y, enum config_path_how how, char *why,
    size_t len)
{
	char aside[PATH_MAX + 8], *xtmp;

	(void)xasprintf(&xtmp, "%s" STATUS_TMP_SUFFIX, x->path);
	if (how == CONFIG_PATH_SAME)
		(void)snprintf(why, len, "%s%s is also %s%s", x->own, x->path,
		    y->role, config_path_aside(aside, sizeof(aside), y->path,
		    x->path));
	else if (how == CONFIG_PATH_MY_TMP)
		(void)snprintf(why, len, "%s%s is written through %s, which "
		    "is also %s%s", x->own, x->path, xtmp, y->role,
		    config_path_aside(aside, sizeof(aside), y->path, xtmp));
	else
		(void)snprintf(why, len, "%s%s is also the temporary copy of "
		    "%s (%s" STATUS_TMP_SUFFIX ")", x->own, x->path, y->role,
		    y->path);
	free(xtmp);
}

/* Whether a's temporary copy is b. */
static int
config_path_tmp_is(const struct config_path_file *a,
    const struct config_path_file *b)
{
	char *tmp;
	int same;

	if (!a->tmp)
		return 0;
	(void)xasprintf(&tmp, "%s" STATUS_TMP_SUFFIX, a->path);
	same = config_path_same(tmp, b->path);
	free(tmp);
	return same;
}

static enum config_path_how
config_path_pair(const struct config_path_file *x,
    const struct config_path_file *y)
{
	if (config_path_same(x->path, y->path))
		return CONFIG_PATH_SAME;
	if (config_path_tmp_is(x, y))
		return CONFIG_PATH_MY_TMP;
	if (config_path_tmp_is(y, x))
		return CONFIG_PATH_ITS_TMP;
	return CONFIG_PATH_APART;
}

int
config_path_clash(const struct config *cfg, const char *conf,
    const int *where, char *why, size_t len)
{
	struct config_path_file f[4] = {
		{ "the configuration file", "", conf, -1, 0 },
		{ "control.socket", "", cfg->socket_path, K_SOCKET, 0 },
		{ NULL, "its session file ", NULL, K_SOCKET, 1 },
		{ "control.status_file", "", cfg->status_file, K_STATUS_FILE,
		    1 },
	};
	const struct config_path_file *x, *y;
	enum config_path_how how;
	char *session, *role;
	size_t i, j, n = sizeof(f) / sizeof(f[0]);
	int key = -1;

	session = session_file_path(cfg->socket_path);
	(void)xasprintf(&role, "the session file of control.socket %s",
	    cfg->socket_path);
	f[2].path = session;
	f[2].role = role;
	for (i = 0; i < n && key == -1; i++)
		for (j = i + 1; j < n && key == -1; j++) {
			/*
			 * The later file's key is the one in the wrong, unless
			 * it was left to its default and the other was set.
			 */
			x = &f[j];
			y = &f[i];
			if (where[x->key] == 0 && y->key != -1 &&
			    where[y->key] != 0) {
				x = &f[i];
				y = &f[j];
			}
			how = config_path_pair(x, y);
			if (how == CONFIG_PATH_APART)
				continue;
			config_path_why(x, y, how, why, len);
			key = x->key;
		}
	free(role);
	free(session);
	return key;
}
