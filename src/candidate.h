/* Candidate node names and key=value node data. */
#ifndef ZKELECTD_CANDIDATE_H
#define ZKELECTD_CANDIDATE_H

#include <stddef.h>
#include <stdint.h>

#define CANDIDATE_NAME_PREFIX "candidate-"

/* A parsed candidate node name: candidate-<sid>_<seq>. */
struct candidate {
	const char *name;
	int64_t sid;
	int64_t seq;		/* the suffix, unwrapped past 2^31 */
};

int candidate_parse(const char *name, struct candidate *out);
/* Sorts by sequence into out (room for n); junk names are dropped.
 * Returns the count kept. */
int candidate_order(char *const *names, int n, struct candidate *out);
/* Copies the value of "key=" from "key=value\n" lines into buf, "" when
 * missing; a value longer than len is cut. */
void candidate_kv(const char *text, const char *key, char *buf, size_t len);

#endif
