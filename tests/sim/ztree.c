/*
 * A znode tree as ZooKeeper keeps it: path, data, czxid, mzxid, data
 * version, the parent's cversion (which the sequential suffix comes from)
 * and the ephemeral owner. The trees of the model hold a few dozen nodes,
 * so a flat array searched linearly is both the simplest and fast enough.
 */
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "xmalloc.h"

void
ztree_init(struct ztree *t)
{
	memset(t, 0, sizeof(*t));
}

void
ztree_free(struct ztree *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}

void
ztree_copy(struct ztree *dst, const struct ztree *src)
{
	if (dst->cap < src->n) {
		dst->cap = src->cap;
		dst->v = xreallocarray(dst->v, (size_t)dst->cap,
		    sizeof(*dst->v));
	}
	if (src->n > 0)
		memcpy(dst->v, src->v, (size_t)src->n * sizeof(*src->v));
	dst->n = src->n;
}

struct znode *
ztree_get(const struct ztree *t, const char *path)
{
	int i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->v[i].path, path) == 0)
			return &t->v[i];
	return NULL;
}

struct znode *
ztree_parent(const struct ztree *t, const char *path)
{
	char buf[SIM_PATH];
	char *slash;

	sim_copy(buf, sizeof(buf), path);
	buf[sizeof(buf) - 1] = '\0';
	slash = strrchr(buf, '/');
	if (slash == NULL || slash == buf)
		return NULL;
	*slash = '\0';
	return ztree_get(t, buf);
}

/* Whether child is a direct child of parent. */
static const char *
ztree_child_name(const char *parent, const char *child)
{
	size_t n = strlen(parent);

	if (strncmp(child, parent, n) != 0 || child[n] != '/')
		return NULL;
	if (strchr(child + n + 1, '/') != NULL)
		return NULL;
	return child + n + 1;
}

int
ztree_has_children(const struct ztree *t, const char *path)
{
	int i;

	for (i = 0; i < t->n; i++)
		if (ztree_child_name(path, t->v[i].path) != NULL)
			return 1;
	return 0;
}

static int
ztree_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
ztree_children(const struct ztree *t, const char *path, char ***out)
{
	const char *name;
	char **v;
	int i, n = 0;

	v = xcalloc((size_t)t->n + 1, sizeof(*v));
	for (i = 0; i < t->n; i++)
		if ((name = ztree_child_name(path, t->v[i].path)) != NULL)
			v[n++] = xstrdup(name);
	/*
	 * ZooKeeper returns children in hash order; the recipe must not
	 * depend on it, so the model gives an order unrelated to sequence.
	 */
	qsort(v, (size_t)n, sizeof(*v), ztree_cmp);
	*out = v;
	return n;
}

void
ztree_names_free(char **names, int n)
{
	int i;

	if (names == NULL)
		return;
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

struct znode *
ztree_add(struct ztree *t, const char *path, const char *data, int64_t zxid,
    int64_t owner)
{
	struct znode *z, *parent;

	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 32;
		t->v = xreallocarray(t->v, (size_t)t->cap, sizeof(*t->v));
	}
	/* Look the parent up before the array may move. */
	parent = ztree_parent(t, path);
	if (parent != NULL)
		parent->cversion++;
	z = &t->v[t->n++];
	memset(z, 0, sizeof(*z));
	sim_copy(z->path, sizeof(z->path), path);
	sim_copy(z->data, sizeof(z->data), data);
	z->czxid = zxid;
	z->mzxid = zxid;
	z->owner = owner;
	return z;
}

void
ztree_del(struct ztree *t, const char *path)
{
	struct znode *z = ztree_get(t, path), *parent;

	if (z == NULL)
		return;
	*z = t->v[--t->n];
	parent = ztree_parent(t, path);
	if (parent != NULL)
		parent->cversion++;
}
