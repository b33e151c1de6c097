/* Allocation that never returns NULL: running out of memory is fatal. */
#ifndef ZKELECTD_XMALLOC_H
#define ZKELECTD_XMALLOC_H

#include <stddef.h>

void *xmalloc(size_t);
void *xcalloc(size_t, size_t);
void *xreallocarray(void *, size_t, size_t);
char *xstrdup(const char *);
char *xstrndup(const char *, size_t);
int xasprintf(char **, const char *, ...) __attribute__((format(printf, 2, 3)));

#endif
