/* Candidate node names and key=value node data. */
#ifndef ZKELECTD_CANDIDATE_H
#define ZKELECTD_CANDIDATE_H

#include <stddef.h>
#include <stdint.h>

#define CANDIDATE_NAME_PREFIX "candidate-"
#define CANDIDATE_CLAIM_PREFIX "claim-"
#define CANDIDATE_PRIORITY_MAX 1000000

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
/* The same for names <prefix><sid>_<seq> (E/claims' claim- nodes). */
int candidate_parse_as(const char *name, const char *prefix,
    struct candidate *out);
int candidate_order_as(char *const *names, int n, const char *prefix,
    struct candidate *out);
/*
 * What peers wrote is untrusted. Copies n bytes of src into dst (room for
 * dstlen with its NUL) under the one rule every output shares: control
 * bytes (C0, DEL, C1) and bytes that are not well-formed UTF-8 become
 * '?'; a value too long is cut before a character. Returns the length.
 */
size_t candidate_clean(char *dst, size_t dstlen, const char *src, size_t n);
/* Copies the value of "key=" from "key=value\n" lines into buf, "" when
 * missing, cleaned by candidate_clean(); a value longer than len is cut. */
void candidate_kv(const char *text, const char *key, char *buf, size_t len);
/* The priority a candidate's data advertises (its "priority=" line): 0
 * when missing or not an integer within election.priority's range. */
int64_t candidate_priority(const char *text);
/* The epoch= of E/leader's or the breadcrumb's data; 0 when not a number. */
int64_t candidate_epoch(const char *text);
/* A priority marker's name, <sid>_<priority> (E/priority): 0, or -1 when
 * it is not one (or the priority is out of election.priority's range). */
int candidate_mark_parse(const char *name, int64_t *sid, int64_t *prio);
/*
 * The queue (names in queue order, each one's data or NULL): the index of
 * the first candidate of the highest priority above floor, skip1 and
 * skip2 (names, or NULL) aside; -1 when none outranks floor.
 */
int candidate_outranking(int n, char *const *names, char *const *datas,
    int64_t floor, const char *skip1, const char *skip2);

#endif
